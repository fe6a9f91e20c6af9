-- Signed statements bound to their place (schema 8).
--
-- From this version every signed statement names what makes its fact
-- unique where it stands (the rule it replaces, the epoch or operator
-- change before it): a signed row copied elsewhere no longer verifies.
-- Statements of version 1 keep verifying for the facts committed before
-- the upgrade (the state machine's step appends the marker event that
-- says where they end). A signature counts once: the same signature on
-- two rows is refused here, and verify names it on a file edited by hand.
CREATE UNIQUE INDEX signatures_once ON signatures(signature);
