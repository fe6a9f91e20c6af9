package termsvg

// pictureGolden is the console screen the README shows: the Pending view
// at 120x40 with its detail pane, from the UI's golden tests (ui/screens_test.go).
const pictureGolden = "TestScreensGolden/pending-120x40.golden"
