-- A schema-10 SQLite ledger exactly as tollgate left it before schema 12
-- (commit dd3a514), dumped with sqlite3's .dump: records (some redacted),
-- auto guards with reports (one failed), approvals approved, rejected and
-- pending, a denial, two conflicts (one reviewed), leases run out (one
-- reconciled), an epoch with a key of it and a fenced call. Its chain
-- head is seq 87, d6f01de1a110ffc28cc8fac0048ce00716d8109b95aeb630bd71568882bf9ba5.
-- TestUpgradeKeepsTheHead migrates it in place and verifies it.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE intents (
    action_key TEXT PRIMARY KEY, payload_sha256 TEXT NOT NULL,
    status TEXT NOT NULL CHECK(status = 'recorded'));
INSERT INTO intents VALUES('rec-0','ef000e9243545e0e9c8b34b07f564fdde834a98be2fd1de57b019fda432a68d4','recorded');
INSERT INTO intents VALUES('rec-1','c5855d2f013c5a68b20efcfc861c62e19f349a942c7689213a5ce1dcced061c1','recorded');
INSERT INTO intents VALUES('rec-2','da5c3b2e2cb66e480dce1ec07e2961481fb7994a95804787d6ed93a4fb644f2a','recorded');
INSERT INTO intents VALUES('rec-3','ec17f98752da0bdea309ecd052706bbcce337a9188bcaeb96f62097b0b4b2822','recorded');
INSERT INTO intents VALUES('rec-4','806801b02a4ae05354647e4ecb94bf6a085e29e36d41f14a31f31fcd0d40b81b','recorded');
INSERT INTO intents VALUES('rec-5','e730aa6ad29ab9ce6a5b5eb8242038105089e0cf5d1ef195790f0f3269cb8869','recorded');
INSERT INTO intents VALUES('rec-6','491ff3efd5808b466f59a0e142ac0d13a1462e2c92d16743600332b1a12e25e9','recorded');
INSERT INTO intents VALUES('rec-7','831a7223c88a0349e2f33c2b6b2c609e67c497659e9d64ca00b0cdd810d844e4','recorded');
INSERT INTO intents VALUES('refund-0','73e1917bf4d95d9a3420a8dde1745896153abc913ac1eff59ef3b1d7435c9f0d','recorded');
INSERT INTO intents VALUES('refund-1','ecf43d1b0289b0971f43077d699b291b584e28d04aa751f39222e9c4f3ea716c','recorded');
INSERT INTO intents VALUES('refund-2','11c0377d034f5914409ac471f1b50e09013d04034fb54d7ae3aca355837e6ce6','recorded');
INSERT INTO intents VALUES('refund-3','4fb793483ab60a701330546d424637fb98026e0b728a09e5669699acb79b92b5','recorded');
INSERT INTO intents VALUES('refund-4','dae5bb3ac9e6ce82b7ad58795ad3cb8255c6dee20da3f17c742fd418752f5664','recorded');
INSERT INTO intents VALUES('refund-5','47b3313857392fa32e8df5825ce744ec7a93dd2dd3c29e9f69bf910e6c961b88','recorded');
INSERT INTO intents VALUES('refund-6','be888b508e731520cba33ef2ae4eb8b90529efc8690ce2a80ae9eff101936444','recorded');
INSERT INTO intents VALUES('refund-7','703a0f82a32fbf4089c7c9f31f909deb3b736d814bbea3b45f1053ef2dcf8c3f','recorded');
INSERT INTO intents VALUES('refund-8','829df957bb49df7341afb5471c51a99d897789026a7952a4b05603004ec25422','recorded');
INSERT INTO intents VALUES('refund-9','f0905fe007f6d58ad3f33db95eb5e70262aa8947c3b62b5dfe110e2fa83fab97','recorded');
INSERT INTO intents VALUES('wire-0','54c23f8a2eaba22cf75a8425fe0bfb398acab951634b629e782933f127476200','recorded');
INSERT INTO intents VALUES('wire-1','f328f89dacc2427666bf3454726e6a09c1070e1ccb02255405103be4115cbb78','recorded');
INSERT INTO intents VALUES('wire-2','90f78b0696699f42101f8ca09c1f2c450cd59d2ac3dbb1dd8b10e34ca9a6172a','recorded');
INSERT INTO intents VALUES('wire-3','49c32b95715b3dbd621e5b1ad52ecc1f256770eb31bbea3c4be31fd1a997f068','recorded');
INSERT INTO intents VALUES('wire-4','8c7ce06e6793200c1a98f418c413d21f4b0c74b3bbdc490093d7041f841dddf3','recorded');
INSERT INTO intents VALUES('wire-5','5f01b5b9ff93d974612c4b410527a9664b669fa0f63696e0fab7bfa59ef5dc2e','recorded');
INSERT INTO intents VALUES('drop-0','f23e48a9b494fba98c8a68f6d5bc3dcb9b6682d03fa2110aafa350e32ff5d0b9','recorded');
INSERT INTO intents VALUES('hsr1:65ad89ac-9b54-465b-88a4-42fd2842ec25:refund-x','c55909ed6fe4b238fe40827b1c830327c8ec4acf4a396313ebcbc6cd6b4b1f59','recorded');
CREATE TABLE payloads (
    action_key     TEXT PRIMARY KEY REFERENCES intents(action_key),
    payload_sha256 TEXT NOT NULL CHECK(length(payload_sha256) = 64 AND payload_sha256 NOT GLOB '*[^0-9a-f]*'),
    canonical      TEXT CHECK(canonical IS NULL OR length(canonical) >= 30),
    redacted       INTEGER NOT NULL CHECK(redacted IN (0, 1)),
    kind           TEXT NOT NULL,
    kind_sha256    TEXT NOT NULL CHECK(length(kind_sha256) = 64),
    target_sha256  TEXT NOT NULL CHECK(length(target_sha256) = 64),
    body_sha256    TEXT NOT NULL CHECK(length(body_sha256) = 64),
    agent          TEXT NOT NULL,
    recorded_ms    INTEGER NOT NULL, context_sha256 TEXT NOT NULL DEFAULT ''
    CHECK(context_sha256 = '' OR (length(context_sha256) = 64 AND context_sha256 NOT GLOB '*[^0-9a-f]*')), context TEXT NOT NULL DEFAULT '' CHECK(length(context) <= 8192),
    CHECK((redacted = 1) = (canonical IS NULL))
) STRICT;
INSERT INTO payloads VALUES('rec-0','ef000e9243545e0e9c8b34b07f564fdde834a98be2fd1de57b019fda432a68d4',NULL,1,'note','edb465624291e4053c6c5ea4b7eb320dec773e10a57d26b95dcf0564f8e310f8','e3b98a4da31a127d4bde6e43033f66ba274cab0eb7eb1c70ec41402bf6273dd8','03d9cc741a0dc36e8752b9e5c09baaed7431a9bce401dc710199a23a2f01aad3','a1',1796115600000,'','');
INSERT INTO payloads VALUES('rec-1','c5855d2f013c5a68b20efcfc861c62e19f349a942c7689213a5ce1dcced061c1','{"body":"body 1","kind":"note","target":"t"}',0,'note','edb465624291e4053c6c5ea4b7eb320dec773e10a57d26b95dcf0564f8e310f8','e3b98a4da31a127d4bde6e43033f66ba274cab0eb7eb1c70ec41402bf6273dd8','e92b667eb438d66f429e37c1aab76513c1953666b7cb7997f739bfa786723cfd','a1',1796115600000,'','');
INSERT INTO payloads VALUES('rec-2','da5c3b2e2cb66e480dce1ec07e2961481fb7994a95804787d6ed93a4fb644f2a','{"body":"body 2","kind":"note","target":"t"}',0,'note','edb465624291e4053c6c5ea4b7eb320dec773e10a57d26b95dcf0564f8e310f8','e3b98a4da31a127d4bde6e43033f66ba274cab0eb7eb1c70ec41402bf6273dd8','1997ebe7ee9800e9fe8e16532432e53caf64130b3017bd4dd8bc4698e8b3ed1f','a1',1796115600000,'','');
INSERT INTO payloads VALUES('rec-3','ec17f98752da0bdea309ecd052706bbcce337a9188bcaeb96f62097b0b4b2822',NULL,1,'note','edb465624291e4053c6c5ea4b7eb320dec773e10a57d26b95dcf0564f8e310f8','e3b98a4da31a127d4bde6e43033f66ba274cab0eb7eb1c70ec41402bf6273dd8','fc6ac673edd9009439a62bd002b3a5085aa3d275efc2d15ebd61c354c88cbe06','a1',1796115600000,'','');
INSERT INTO payloads VALUES('rec-4','806801b02a4ae05354647e4ecb94bf6a085e29e36d41f14a31f31fcd0d40b81b','{"body":"body 4","kind":"note","target":"t"}',0,'note','edb465624291e4053c6c5ea4b7eb320dec773e10a57d26b95dcf0564f8e310f8','e3b98a4da31a127d4bde6e43033f66ba274cab0eb7eb1c70ec41402bf6273dd8','48333fe318127e2d0b7b6606d54aa006832ead656ff9bcc4dc6075afcae198de','a1',1796115600000,'','');
INSERT INTO payloads VALUES('rec-5','e730aa6ad29ab9ce6a5b5eb8242038105089e0cf5d1ef195790f0f3269cb8869','{"body":"body 5","kind":"note","target":"t"}',0,'note','edb465624291e4053c6c5ea4b7eb320dec773e10a57d26b95dcf0564f8e310f8','e3b98a4da31a127d4bde6e43033f66ba274cab0eb7eb1c70ec41402bf6273dd8','c0a3970a493d140c81493092e79befa5fbed3d2201be5c51afbe3dfb12fc1ea2','a1',1796115600000,'','');
INSERT INTO payloads VALUES('rec-6','491ff3efd5808b466f59a0e142ac0d13a1462e2c92d16743600332b1a12e25e9',NULL,1,'note','edb465624291e4053c6c5ea4b7eb320dec773e10a57d26b95dcf0564f8e310f8','e3b98a4da31a127d4bde6e43033f66ba274cab0eb7eb1c70ec41402bf6273dd8','fc48cdbb3775dfcf989c6c9cc425c1d392cdfabe9a37def558acfb82f9b65f30','a1',1796115600000,'','');
INSERT INTO payloads VALUES('rec-7','831a7223c88a0349e2f33c2b6b2c609e67c497659e9d64ca00b0cdd810d844e4','{"body":"body 7","kind":"note","target":"t"}',0,'note','edb465624291e4053c6c5ea4b7eb320dec773e10a57d26b95dcf0564f8e310f8','e3b98a4da31a127d4bde6e43033f66ba274cab0eb7eb1c70ec41402bf6273dd8','a4b7e1e4d4606167eadaeb423ba20487e73449903126ecb6d23f506f75f75207','a1',1796115600000,'','');
INSERT INTO payloads VALUES('refund-0','73e1917bf4d95d9a3420a8dde1745896153abc913ac1eff59ef3b1d7435c9f0d','{"body":"10 EUR","kind":"refund","target":"acct-0"}',0,'refund','1d630127108f1feaf1f7beee59b66dd679daf712a441f3d0a39ee9ea0f2b7a95','ec6c60ceeae2f01f42b7763881d48d783118a368b8629b65d4cf210b3dabe0ce','2c23e4533b0afc88aebf9c9d6e20efb6e9bde5d2c81255ff9b3a7660c18cd505','a2',1796115600000,'','');
INSERT INTO payloads VALUES('refund-1','ecf43d1b0289b0971f43077d699b291b584e28d04aa751f39222e9c4f3ea716c','{"body":"10 EUR","kind":"refund","target":"acct-1"}',0,'refund','1d630127108f1feaf1f7beee59b66dd679daf712a441f3d0a39ee9ea0f2b7a95','ba36a4edd92d37c66d4e05462aea603a0f34c2eea5cbe39d7b704f642fca326f','2c23e4533b0afc88aebf9c9d6e20efb6e9bde5d2c81255ff9b3a7660c18cd505','a2',1796115601000,'','');
INSERT INTO payloads VALUES('refund-2','11c0377d034f5914409ac471f1b50e09013d04034fb54d7ae3aca355837e6ce6','{"body":"10 EUR","kind":"refund","target":"acct-2"}',0,'refund','1d630127108f1feaf1f7beee59b66dd679daf712a441f3d0a39ee9ea0f2b7a95','e19576827aa4259ce8f222e63165d2983f3920fb6022e8fcf240d1b814450c92','2c23e4533b0afc88aebf9c9d6e20efb6e9bde5d2c81255ff9b3a7660c18cd505','a2',1796115602000,'','');
INSERT INTO payloads VALUES('refund-3','4fb793483ab60a701330546d424637fb98026e0b728a09e5669699acb79b92b5','{"body":"10 EUR","kind":"refund","target":"acct-3"}',0,'refund','1d630127108f1feaf1f7beee59b66dd679daf712a441f3d0a39ee9ea0f2b7a95','ac5e55584c7534fa8ca4768e271bbd013d8a1612ac1cd030c50e8180704c11b8','2c23e4533b0afc88aebf9c9d6e20efb6e9bde5d2c81255ff9b3a7660c18cd505','a2',1796115603000,'','');
INSERT INTO payloads VALUES('refund-4','dae5bb3ac9e6ce82b7ad58795ad3cb8255c6dee20da3f17c742fd418752f5664','{"body":"10 EUR","kind":"refund","target":"acct-4"}',0,'refund','1d630127108f1feaf1f7beee59b66dd679daf712a441f3d0a39ee9ea0f2b7a95','7b59cbdb36887a89b5e1965fb3074394e3501f2f51635002ac50786eb4ddfa58','2c23e4533b0afc88aebf9c9d6e20efb6e9bde5d2c81255ff9b3a7660c18cd505','a2',1796115604000,'','');
INSERT INTO payloads VALUES('refund-5','47b3313857392fa32e8df5825ce744ec7a93dd2dd3c29e9f69bf910e6c961b88','{"body":"10 EUR","kind":"refund","target":"acct-5"}',0,'refund','1d630127108f1feaf1f7beee59b66dd679daf712a441f3d0a39ee9ea0f2b7a95','17f27e42e4fcccf08aa29dc00d783ac3c03a7584f18fcd2eb90dfd141fa1ad8d','2c23e4533b0afc88aebf9c9d6e20efb6e9bde5d2c81255ff9b3a7660c18cd505','a2',1796115605000,'','');
INSERT INTO payloads VALUES('refund-6','be888b508e731520cba33ef2ae4eb8b90529efc8690ce2a80ae9eff101936444','{"body":"10 EUR","kind":"refund","target":"acct-6"}',0,'refund','1d630127108f1feaf1f7beee59b66dd679daf712a441f3d0a39ee9ea0f2b7a95','88d559a6dee09752198ec5a309907ea2c0907a77a33684c05e83ccfbb66a4ca7','2c23e4533b0afc88aebf9c9d6e20efb6e9bde5d2c81255ff9b3a7660c18cd505','a2',1796115606000,'','');
INSERT INTO payloads VALUES('refund-7','703a0f82a32fbf4089c7c9f31f909deb3b736d814bbea3b45f1053ef2dcf8c3f','{"body":"10 EUR","kind":"refund","target":"acct-7"}',0,'refund','1d630127108f1feaf1f7beee59b66dd679daf712a441f3d0a39ee9ea0f2b7a95','557babe866364845dbbf6ace6b9693fc325afebe5c6926c530d36b2b0f5b6430','2c23e4533b0afc88aebf9c9d6e20efb6e9bde5d2c81255ff9b3a7660c18cd505','a2',1796115607000,'','');
INSERT INTO payloads VALUES('refund-8','829df957bb49df7341afb5471c51a99d897789026a7952a4b05603004ec25422','{"body":"10 EUR","kind":"refund","target":"acct-8"}',0,'refund','1d630127108f1feaf1f7beee59b66dd679daf712a441f3d0a39ee9ea0f2b7a95','30759a0eb72a143d0f59fc64ea0fdd36856030ffb9e4ac2ae9c15038e4cdb0fb','2c23e4533b0afc88aebf9c9d6e20efb6e9bde5d2c81255ff9b3a7660c18cd505','a2',1796115608000,'','');
INSERT INTO payloads VALUES('refund-9','f0905fe007f6d58ad3f33db95eb5e70262aa8947c3b62b5dfe110e2fa83fab97','{"body":"10 EUR","kind":"refund","target":"acct-9"}',0,'refund','1d630127108f1feaf1f7beee59b66dd679daf712a441f3d0a39ee9ea0f2b7a95','4559d94671eabee39c1252795b55d8e8a4b17a4a06a3b114186410135db14cc0','2c23e4533b0afc88aebf9c9d6e20efb6e9bde5d2c81255ff9b3a7660c18cd505','a2',1796115609000,'','');
INSERT INTO payloads VALUES('wire-0','54c23f8a2eaba22cf75a8425fe0bfb398acab951634b629e782933f127476200','{"body":"0 EUR","kind":"wire","target":"bank"}',0,'wire','9b2abfc29cc47494c87171177c2af369fff9f067fd768f6f58c5d83e5c658507','4381dc2ab14285160c808659aee005d51255add7264b318d07c7417292c7442c','b7d4c267f85ef5375eb77c02c25a4f409d0714cd3362664d5376601887d9f69b','a3',1796115610000,'','');
INSERT INTO payloads VALUES('wire-1','f328f89dacc2427666bf3454726e6a09c1070e1ccb02255405103be4115cbb78','{"body":"1 EUR","kind":"wire","target":"bank"}',0,'wire','9b2abfc29cc47494c87171177c2af369fff9f067fd768f6f58c5d83e5c658507','4381dc2ab14285160c808659aee005d51255add7264b318d07c7417292c7442c','329f15acc2136d029d38bad453ec61ea27419c0ad902e9a620c6d84d703347a4','a3',1796115610000,'','');
INSERT INTO payloads VALUES('wire-2','90f78b0696699f42101f8ca09c1f2c450cd59d2ac3dbb1dd8b10e34ca9a6172a','{"body":"2 EUR","kind":"wire","target":"bank"}',0,'wire','9b2abfc29cc47494c87171177c2af369fff9f067fd768f6f58c5d83e5c658507','4381dc2ab14285160c808659aee005d51255add7264b318d07c7417292c7442c','aa47c1166ba717d3e4780e99875773a09082340673a5fce96aa1a7bd20167f62','a3',1796115610000,'','');
INSERT INTO payloads VALUES('wire-3','49c32b95715b3dbd621e5b1ad52ecc1f256770eb31bbea3c4be31fd1a997f068','{"body":"3 EUR","kind":"wire","target":"bank"}',0,'wire','9b2abfc29cc47494c87171177c2af369fff9f067fd768f6f58c5d83e5c658507','4381dc2ab14285160c808659aee005d51255add7264b318d07c7417292c7442c','6f13bbb27169a5b3a8e4a108cfd7dc36657c85913307182f31599edbec8d91bf','a3',1796115610000,'','');
INSERT INTO payloads VALUES('wire-4','8c7ce06e6793200c1a98f418c413d21f4b0c74b3bbdc490093d7041f841dddf3','{"body":"4 EUR","kind":"wire","target":"bank"}',0,'wire','9b2abfc29cc47494c87171177c2af369fff9f067fd768f6f58c5d83e5c658507','4381dc2ab14285160c808659aee005d51255add7264b318d07c7417292c7442c','efaebcafa2258ab0df2bfd4c10610b433fb91e0fc9884653e267faabd1542976','a3',1796115610000,'','');
INSERT INTO payloads VALUES('wire-5','5f01b5b9ff93d974612c4b410527a9664b669fa0f63696e0fab7bfa59ef5dc2e','{"body":"5 EUR","kind":"wire","target":"bank"}',0,'wire','9b2abfc29cc47494c87171177c2af369fff9f067fd768f6f58c5d83e5c658507','4381dc2ab14285160c808659aee005d51255add7264b318d07c7417292c7442c','684aa878cc76b3b10b4814c73d06f8279f48f76fc9ae7a0ce202576176a3709f','a3',1796115610000,'','');
INSERT INTO payloads VALUES('drop-0','f23e48a9b494fba98c8a68f6d5bc3dcb9b6682d03fa2110aafa350e32ff5d0b9','{"body":"all","kind":"drop","target":"db"}',0,'drop','d90ee9ccf6bea1d2942a7b21319338198dec2a746f8a0d0771621f00da2e0864','7bdc25d1694ef984782a16f6f1710c1c6bc83ba7a131b515baf532bea021d011','5ef5ef0364b6939c4ca61f34b393f7b368d1be8619647aaf83d5b395919ab629','a3',1796115610000,'','');
INSERT INTO payloads VALUES('hsr1:65ad89ac-9b54-465b-88a4-42fd2842ec25:refund-x','c55909ed6fe4b238fe40827b1c830327c8ec4acf4a396313ebcbc6cd6b4b1f59','{"body":"5 EUR","kind":"refund","target":"acct-x"}',0,'refund','1d630127108f1feaf1f7beee59b66dd679daf712a441f3d0a39ee9ea0f2b7a95','f6b0daab5c8d2918bd7297c766f8926bb3e06ea0dc053ca2be25801c6040335f','684aa878cc76b3b10b4814c73d06f8279f48f76fc9ae7a0ce202576176a3709f','a2',1796122810000,'','');
CREATE TABLE conflicts (
    id               INTEGER PRIMARY KEY,
    action_key       TEXT NOT NULL REFERENCES intents(action_key),
    stored_sha256    TEXT NOT NULL CHECK(length(stored_sha256) = 64),
    attempted_sha256 TEXT NOT NULL CHECK(length(attempted_sha256) = 64 AND attempted_sha256 NOT GLOB '*[^0-9a-f]*'),
    attempted        TEXT,
    redacted         INTEGER NOT NULL CHECK(redacted IN (0, 1)),
    differs          TEXT NOT NULL,
    agent            TEXT NOT NULL,
    at_ms            INTEGER NOT NULL
) STRICT;
INSERT INTO conflicts VALUES(1,'refund-0','73e1917bf4d95d9a3420a8dde1745896153abc913ac1eff59ef3b1d7435c9f0d','4dedacc81545561647b41c1092ca4034fc19569104df574d1e3a26458295e6dd','{"body":"99 EUR","kind":"refund","target":"acct-0"}',0,'body','a2',1796115610000);
INSERT INTO conflicts VALUES(2,'rec-1','c5855d2f013c5a68b20efcfc861c62e19f349a942c7689213a5ce1dcced061c1','ab34044ea285643e230d0339abdd5392d76004acc4c9fdb32c3a796033ce1ac2','{"body":"other","kind":"note","target":"t"}',0,'body','a1',1796115610000);
CREATE TABLE events (
    seq        INTEGER PRIMARY KEY,
    action_key TEXT NOT NULL,
    type       TEXT NOT NULL,
    actor      TEXT NOT NULL,
    detail     TEXT NOT NULL,
    at_ms      INTEGER NOT NULL,
    prev_hash  TEXT NOT NULL CHECK(length(prev_hash) = 64 AND prev_hash NOT GLOB '*[^0-9a-f]*'),
    hash       TEXT NOT NULL UNIQUE CHECK(length(hash) = 64 AND hash NOT GLOB '*[^0-9a-f]*')
, fact_table TEXT NOT NULL DEFAULT '', fact_row TEXT NOT NULL DEFAULT '', fact_sha256 TEXT NOT NULL DEFAULT '', hv INTEGER NOT NULL DEFAULT 1 CHECK(hv IN (1, 2))) STRICT;
INSERT INTO events VALUES(1,'','ledger_created','tollgate','{"ledger_id":"b08376f9-b84b-4660-8018-f08f85ca14d8"}',1796115600000,'0000000000000000000000000000000000000000000000000000000000000000','b26147c01c8db84991e5e955a3b7a11578427357810488608c88b29c3d668c9f','ledger_meta','1','68c7bd9c6d380406e34984991fae360fe4476d7f602e529dc0cc94e23356ecb9',2);
INSERT INTO events VALUES(2,'','policy_set','root','{"approvers":1,"mode":"auto","pattern":"refund","rule_id":1,"ttl_ms":0}',1796115600000,'b26147c01c8db84991e5e955a3b7a11578427357810488608c88b29c3d668c9f','23713942f551178d1f3a06f667d982c32e6d5d8c61a4ff3b7d9454b2573a5ba4','policy_rules','1','43a51ecfba4c0fda53f80fe15d2b35c3be11085b20bd85537f07d4070189329a',2);
INSERT INTO events VALUES(3,'','policy_set','root','{"approvers":1,"mode":"approval","pattern":"wire","rule_id":2,"ttl_ms":86400000}',1796115600000,'23713942f551178d1f3a06f667d982c32e6d5d8c61a4ff3b7d9454b2573a5ba4','af71cee768a2691cec4759897fa75e3502e5f761988b2d0691e5ad8667dbac75','policy_rules','2','0689fbaff6823f4d06fc2a758236ea854fac9bb3f5f9d7c0af8b8b1693012385',2);
INSERT INTO events VALUES(4,'','policy_set','root','{"approvers":1,"mode":"deny","pattern":"drop","rule_id":3,"ttl_ms":0}',1796115600000,'af71cee768a2691cec4759897fa75e3502e5f761988b2d0691e5ad8667dbac75','7ab3133c975a7935cde28d5409a0163ec009d823e3dddee3837bf75bbae5d402','policy_rules','3','fcb7f0b9f977377a28b7c06959b058301cfddeff9f3bb9f4e319b010f3e8d1a8',2);
INSERT INTO events VALUES(5,'rec-0','recorded','a1','{"kind":"note","payload_sha256":"ef000e9243545e0e9c8b34b07f564fdde834a98be2fd1de57b019fda432a68d4","redacted":true}',1796115600000,'7ab3133c975a7935cde28d5409a0163ec009d823e3dddee3837bf75bbae5d402','d32479d4e7705fbe7176756cd046d5698ea9f79f13abdde2f7746486d15e97e4','payloads','rec-0','6e64ce9d46f94f2d95b33d6cddb81f945bc4c3b1f0fc9b87744afa818f6df0cf',2);
INSERT INTO events VALUES(6,'rec-1','recorded','a1','{"kind":"note","payload_sha256":"c5855d2f013c5a68b20efcfc861c62e19f349a942c7689213a5ce1dcced061c1","redacted":false}',1796115600000,'d32479d4e7705fbe7176756cd046d5698ea9f79f13abdde2f7746486d15e97e4','d928a35874c1506ea0e5d32ed417813f7b63c75e9fd4cc8df2aba5e0949f288d','payloads','rec-1','0fb0ae231eaf47520bd1861d2571b70bd98b322e8400057ca3edae24560ae170',2);
INSERT INTO events VALUES(7,'rec-2','recorded','a1','{"kind":"note","payload_sha256":"da5c3b2e2cb66e480dce1ec07e2961481fb7994a95804787d6ed93a4fb644f2a","redacted":false}',1796115600000,'d928a35874c1506ea0e5d32ed417813f7b63c75e9fd4cc8df2aba5e0949f288d','0a3dd04fa0db28a780b7683dcaad99fccb2bfa8a1ad44fbb96aeeff19afe7f3b','payloads','rec-2','0153043b5ec14ad14cb9a0704f48888b91935a8f6efe3dfee9c46d7812c74642',2);
INSERT INTO events VALUES(8,'rec-3','recorded','a1','{"kind":"note","payload_sha256":"ec17f98752da0bdea309ecd052706bbcce337a9188bcaeb96f62097b0b4b2822","redacted":true}',1796115600000,'0a3dd04fa0db28a780b7683dcaad99fccb2bfa8a1ad44fbb96aeeff19afe7f3b','a30e7c5dd5d396805e04dd618a6a5226e51c1acf92e863ee9113c9297cf4fbee','payloads','rec-3','f9994b1bb2a8fd1f36d280bdbe51f6ad8f397f1851c9067cefb913884119aa87',2);
INSERT INTO events VALUES(9,'rec-4','recorded','a1','{"kind":"note","payload_sha256":"806801b02a4ae05354647e4ecb94bf6a085e29e36d41f14a31f31fcd0d40b81b","redacted":false}',1796115600000,'a30e7c5dd5d396805e04dd618a6a5226e51c1acf92e863ee9113c9297cf4fbee','9c89582890ffb0682f77b9353c39bc94ae98383a4361280b5279dedc27fc00fc','payloads','rec-4','4ec6a5168a3c6035c65fe58f24e36713061ecf404b677ca0c4eea779883b5693',2);
INSERT INTO events VALUES(10,'rec-5','recorded','a1','{"kind":"note","payload_sha256":"e730aa6ad29ab9ce6a5b5eb8242038105089e0cf5d1ef195790f0f3269cb8869","redacted":false}',1796115600000,'9c89582890ffb0682f77b9353c39bc94ae98383a4361280b5279dedc27fc00fc','1c50f192b1e16207063aa31b0f07dc0ebe6e3be1cca7037bd50b52eb9424d721','payloads','rec-5','567b0bb378a4bab7084aec5c0e6c20a0730f0b51db1195e970c27666048de1d6',2);
INSERT INTO events VALUES(11,'rec-6','recorded','a1','{"kind":"note","payload_sha256":"491ff3efd5808b466f59a0e142ac0d13a1462e2c92d16743600332b1a12e25e9","redacted":true}',1796115600000,'1c50f192b1e16207063aa31b0f07dc0ebe6e3be1cca7037bd50b52eb9424d721','10c7aee739f3e10aa7424ccc1ac97797af6afc91254102c5c8725b712418addf','payloads','rec-6','b65a4cdab0f9f4f3c489e8a5cc2a914dba9dc521d3f8572863b39c8d9d7a3cc4',2);
INSERT INTO events VALUES(12,'rec-7','recorded','a1','{"kind":"note","payload_sha256":"831a7223c88a0349e2f33c2b6b2c609e67c497659e9d64ca00b0cdd810d844e4","redacted":false}',1796115600000,'10c7aee739f3e10aa7424ccc1ac97797af6afc91254102c5c8725b712418addf','ce6722478923973ab57e0fbbb5a6c86ee32bf84ab51b9eee6a5ff0ea025739be','payloads','rec-7','e6e25d6e0991a9ee287e170db88c283bed54a68c9c0d262cfcf0ff67f8261c5d',2);
INSERT INTO events VALUES(13,'refund-0','recorded','a2','{"kind":"refund","payload_sha256":"73e1917bf4d95d9a3420a8dde1745896153abc913ac1eff59ef3b1d7435c9f0d","redacted":false}',1796115600000,'ce6722478923973ab57e0fbbb5a6c86ee32bf84ab51b9eee6a5ff0ea025739be','0aa82312725e210807f2daf280dc1c1d26d4d2faa7f9dc18cd096ba22b39869c','payloads','refund-0','9cb6d332339025fbe4c82550640fd78d134cb90d07e067d9a464868a78c8b329',2);
INSERT INTO events VALUES(14,'refund-0','policy_evaluated','a2','{"approvers":1,"mode":"auto","pattern":"refund","ttl_ms":0}',1796115600000,'0aa82312725e210807f2daf280dc1c1d26d4d2faa7f9dc18cd096ba22b39869c','91cd85e5d4e25ec4329da5a21a08a1d07aa23c78932e019918ad71d3485d5da7','policy_evals','refund-0','27c137517dc1b5bd2c1925fda7c26894b13e6fd12b262615078b90f86dde5631',2);
INSERT INTO events VALUES(15,'refund-0','permit_issued','a2','{"lease_ms":1796116500000,"permit_id":"d11b9fa2-be4a-453b-ac37-461a8b1d9200"}',1796115600000,'91cd85e5d4e25ec4329da5a21a08a1d07aa23c78932e019918ad71d3485d5da7','b55f9ddb0fc550304302a4e7fcf1508ed57a4b820467c5c7c36eeb1e84b25243','permits','refund-0','ff944437487ed24b5dcf0ed29dea8bcc3bdb8ff2429ecdf12e8444d290f647db',2);
INSERT INTO events VALUES(16,'refund-1','recorded','a2','{"kind":"refund","payload_sha256":"ecf43d1b0289b0971f43077d699b291b584e28d04aa751f39222e9c4f3ea716c","redacted":false}',1796115601000,'b55f9ddb0fc550304302a4e7fcf1508ed57a4b820467c5c7c36eeb1e84b25243','fe30fb7d5d523643bdfbdbd638efbf6278f41d929c4f21ee418afb7c7e903817','payloads','refund-1','4128570ff627775a571faeeb7b271c334293e3695aca21b7d948b9f80ab7bb85',2);
INSERT INTO events VALUES(17,'refund-1','policy_evaluated','a2','{"approvers":1,"mode":"auto","pattern":"refund","ttl_ms":0}',1796115601000,'fe30fb7d5d523643bdfbdbd638efbf6278f41d929c4f21ee418afb7c7e903817','dec7bdb73ba40fc22e13c83030bda751bccb41b1f187a45ca31fe847e2f49609','policy_evals','refund-1','9c4ab1d4dd17c56caa12b01efe248ebdb887bd4b9607735adc7474f78fb88b33',2);
INSERT INTO events VALUES(18,'refund-1','permit_issued','a2','{"lease_ms":1796116501000,"permit_id":"cb3ac960-270f-44aa-aba9-4857081ee5be"}',1796115601000,'dec7bdb73ba40fc22e13c83030bda751bccb41b1f187a45ca31fe847e2f49609','c5ef5558f3f759c825a84072e213366b6be4d0d3e7fd1d0b5e3194d92645491e','permits','refund-1','197ffb55d8817e4830ae873181cbac5d27254b28dc1485691e515ef1d823662c',2);
INSERT INTO events VALUES(19,'refund-2','recorded','a2','{"kind":"refund","payload_sha256":"11c0377d034f5914409ac471f1b50e09013d04034fb54d7ae3aca355837e6ce6","redacted":false}',1796115602000,'c5ef5558f3f759c825a84072e213366b6be4d0d3e7fd1d0b5e3194d92645491e','9046a9fb6b516e13f0328ded0ed09e7bf9c451211c3683913994b8cf6f250df2','payloads','refund-2','f48a7cb0aca112a48c37b80d97c50d659d2e83da22d0b99cd80a12dff157f9d7',2);
INSERT INTO events VALUES(20,'refund-2','policy_evaluated','a2','{"approvers":1,"mode":"auto","pattern":"refund","ttl_ms":0}',1796115602000,'9046a9fb6b516e13f0328ded0ed09e7bf9c451211c3683913994b8cf6f250df2','cb6d61c387b1cfd05cb4c09b67c04043d384258daaffbbd4539d9669de0b7028','policy_evals','refund-2','16da164d6235f22b306515eeb7dc2982a9d2e98b6c876adc9858b2eceb4c8c64',2);
INSERT INTO events VALUES(21,'refund-2','permit_issued','a2','{"lease_ms":1796116502000,"permit_id":"b9232fcf-64a4-4043-9ce2-ba0d36be4b8f"}',1796115602000,'cb6d61c387b1cfd05cb4c09b67c04043d384258daaffbbd4539d9669de0b7028','9039ff85b213f6e66f6c47a71b89894c114781d4ce5ec51e42d28f013aa76180','permits','refund-2','607efd07607fa1483f0c5d806baec09d56a42bb57551e30270732929ba7e2189',2);
INSERT INTO events VALUES(22,'refund-3','recorded','a2','{"kind":"refund","payload_sha256":"4fb793483ab60a701330546d424637fb98026e0b728a09e5669699acb79b92b5","redacted":false}',1796115603000,'9039ff85b213f6e66f6c47a71b89894c114781d4ce5ec51e42d28f013aa76180','4d069ca57e0205b89aa393cb9cd1ac2d14a9f104db6b26aafd5d89a4cf44c8b8','payloads','refund-3','7999dd3705a55bb8c47fc965cead6c40967ff4ece4c619c7165a1e1d4e0aff2b',2);
INSERT INTO events VALUES(23,'refund-3','policy_evaluated','a2','{"approvers":1,"mode":"auto","pattern":"refund","ttl_ms":0}',1796115603000,'4d069ca57e0205b89aa393cb9cd1ac2d14a9f104db6b26aafd5d89a4cf44c8b8','e4be5b5df0680114003e03572f4d2075dd755aea7414eb4225740b59fe331dd3','policy_evals','refund-3','b5c92dad4df9b295574ef4fabd2d9ce0f9878bf531c42e75125f9219ad5262d1',2);
INSERT INTO events VALUES(24,'refund-3','permit_issued','a2','{"lease_ms":1796116503000,"permit_id":"85d70bc3-f614-4090-a0ea-d4b73c70834a"}',1796115603000,'e4be5b5df0680114003e03572f4d2075dd755aea7414eb4225740b59fe331dd3','10a119b45b2df06a09bf8727001315406a8d9842eaa3fda09173d4fe7c39c6c4','permits','refund-3','f37e92c04ad92081b9a5dfc9c2b7c144ee58d644a49fd4b5053b1bc16152d429',2);
INSERT INTO events VALUES(25,'refund-4','recorded','a2','{"kind":"refund","payload_sha256":"dae5bb3ac9e6ce82b7ad58795ad3cb8255c6dee20da3f17c742fd418752f5664","redacted":false}',1796115604000,'10a119b45b2df06a09bf8727001315406a8d9842eaa3fda09173d4fe7c39c6c4','f85ca476d5229878e1d250735b5a47aeada54bffb4faab274368ce50606b6709','payloads','refund-4','1a9960e44413dd4bfd4b55d00e74b61a32c5db638957e2357fe189139d3f1e55',2);
INSERT INTO events VALUES(26,'refund-4','policy_evaluated','a2','{"approvers":1,"mode":"auto","pattern":"refund","ttl_ms":0}',1796115604000,'f85ca476d5229878e1d250735b5a47aeada54bffb4faab274368ce50606b6709','5c41e09c2573424b7e8bf1e96aea9ff5cd047e2d8d3d14304890efef0bfd6b0b','policy_evals','refund-4','82c9cfb10acef42181bf619a0ba4cdfed9cab02cb7924a6941e5341304159c5e',2);
INSERT INTO events VALUES(27,'refund-4','permit_issued','a2','{"lease_ms":1796116504000,"permit_id":"1965c6fa-716c-4629-8553-f43a5b4c6df9"}',1796115604000,'5c41e09c2573424b7e8bf1e96aea9ff5cd047e2d8d3d14304890efef0bfd6b0b','5f16ba72a51468d47b7c14f761ff23b0f024c5a12f7c73997d516f8449148bea','permits','refund-4','f15ce06bc4436b112a1fe938fb57a93a4f3e749ad28785c21307186cfd6735f0',2);
INSERT INTO events VALUES(28,'refund-5','recorded','a2','{"kind":"refund","payload_sha256":"47b3313857392fa32e8df5825ce744ec7a93dd2dd3c29e9f69bf910e6c961b88","redacted":false}',1796115605000,'5f16ba72a51468d47b7c14f761ff23b0f024c5a12f7c73997d516f8449148bea','a58f93c6e86a4e88c4696a589f2274aa990ff6d8043fc4e73b439be327c86ba3','payloads','refund-5','6fedb1260bc26e563e55c6c8865219ae9bf7d398f01e49c4fe61e8c9a57e61ea',2);
INSERT INTO events VALUES(29,'refund-5','policy_evaluated','a2','{"approvers":1,"mode":"auto","pattern":"refund","ttl_ms":0}',1796115605000,'a58f93c6e86a4e88c4696a589f2274aa990ff6d8043fc4e73b439be327c86ba3','df394294addddf88c33ab1cb9a2e0b6e23cc27db2c6ade4b3ce113938d16d6b7','policy_evals','refund-5','620b958a41b90e9646ac65db190e787de84410088dd8b265d98078569b7f2754',2);
INSERT INTO events VALUES(30,'refund-5','permit_issued','a2','{"lease_ms":1796116505000,"permit_id":"bf0288f7-c4fc-4f63-be98-f067f54d8ac4"}',1796115605000,'df394294addddf88c33ab1cb9a2e0b6e23cc27db2c6ade4b3ce113938d16d6b7','2456befdfd30b6aff6aefc576dac51de6e2eab0ac2db47dd2b68b830f83fe023','permits','refund-5','5daeae6714c19e45b7c9856476a938a20869e00c5f7fb739632a252a35d4dd28',2);
INSERT INTO events VALUES(31,'refund-6','recorded','a2','{"kind":"refund","payload_sha256":"be888b508e731520cba33ef2ae4eb8b90529efc8690ce2a80ae9eff101936444","redacted":false}',1796115606000,'2456befdfd30b6aff6aefc576dac51de6e2eab0ac2db47dd2b68b830f83fe023','1a094075cd98fc98e68502aab92ae7fc1951df67a56a6a7892127896558df004','payloads','refund-6','661419337a37405a7bb6a4fb96737bee0ce22199646746b8b06311b5912e140f',2);
INSERT INTO events VALUES(32,'refund-6','policy_evaluated','a2','{"approvers":1,"mode":"auto","pattern":"refund","ttl_ms":0}',1796115606000,'1a094075cd98fc98e68502aab92ae7fc1951df67a56a6a7892127896558df004','45163c91135b8ac5b7db4f348d7f910957fdd7593e4e74f4a724620eee8a8467','policy_evals','refund-6','06c14f3df48abea3e0ee17bfa10a9a29b67f2b1e3edad06f1ba75549d2ddede7',2);
INSERT INTO events VALUES(33,'refund-6','permit_issued','a2','{"lease_ms":1796116506000,"permit_id":"b528b507-3b61-47b5-aeea-0d065b2f5454"}',1796115606000,'45163c91135b8ac5b7db4f348d7f910957fdd7593e4e74f4a724620eee8a8467','8fb74d4d0e6074f8b95924de44549ce0d35c4eec3df75232e68d7aebdf7a1151','permits','refund-6','76676db7493dd771a583d0919a84beee4bd6ead0adfee6cb780d10e8753279e6',2);
INSERT INTO events VALUES(34,'refund-7','recorded','a2','{"kind":"refund","payload_sha256":"703a0f82a32fbf4089c7c9f31f909deb3b736d814bbea3b45f1053ef2dcf8c3f","redacted":false}',1796115607000,'8fb74d4d0e6074f8b95924de44549ce0d35c4eec3df75232e68d7aebdf7a1151','1c381071037fa41eded37b44f776b82f958a7fb0ab72d9d5d6f2b4858a932e8f','payloads','refund-7','ca94515cbeace85cfab5d6caa6fc05d9485c919318eb1a81b1eec1f635aa6340',2);
INSERT INTO events VALUES(35,'refund-7','policy_evaluated','a2','{"approvers":1,"mode":"auto","pattern":"refund","ttl_ms":0}',1796115607000,'1c381071037fa41eded37b44f776b82f958a7fb0ab72d9d5d6f2b4858a932e8f','8d4cf5309e3bd558c142b4f97f6a17ae45e8e3b31baa9f148e3fbb0f672775bc','policy_evals','refund-7','c63118ca78a439315642881767a08123bbeef797f67785575b534b95563e05b3',2);
INSERT INTO events VALUES(36,'refund-7','permit_issued','a2','{"lease_ms":1796116507000,"permit_id":"68dbd47e-0e7a-49eb-9ed9-b58333e802e4"}',1796115607000,'8d4cf5309e3bd558c142b4f97f6a17ae45e8e3b31baa9f148e3fbb0f672775bc','3edf3b0b463cec668c48b1a3a2f4b218fc3c74e45b64893b9cbc197137f239d9','permits','refund-7','17e89c27e83f89c270f376fb309e2df2cbf2b7c66b4d5dab141b13222736570c',2);
INSERT INTO events VALUES(37,'refund-8','recorded','a2','{"kind":"refund","payload_sha256":"829df957bb49df7341afb5471c51a99d897789026a7952a4b05603004ec25422","redacted":false}',1796115608000,'3edf3b0b463cec668c48b1a3a2f4b218fc3c74e45b64893b9cbc197137f239d9','6580f9680ce89d3fec594d7d60bea65e4d80479480dd2c444a6545283b6cd263','payloads','refund-8','a4481ef840554404e025f98be46268fc8dd5fde4ac556e72337ede25f7a53093',2);
INSERT INTO events VALUES(38,'refund-8','policy_evaluated','a2','{"approvers":1,"mode":"auto","pattern":"refund","ttl_ms":0}',1796115608000,'6580f9680ce89d3fec594d7d60bea65e4d80479480dd2c444a6545283b6cd263','50b71549c00e976e89dad115ab1a0e3b5d933e15aca7c2b064c607969bdc5af1','policy_evals','refund-8','d8d58b690ffbf723122e448acce0faca3ad1275592e57aea4ffae6e7f0a3b9cd',2);
INSERT INTO events VALUES(39,'refund-8','permit_issued','a2','{"lease_ms":1796116508000,"permit_id":"e68a8b8b-7087-4f79-b47c-9436c20dfa9d"}',1796115608000,'50b71549c00e976e89dad115ab1a0e3b5d933e15aca7c2b064c607969bdc5af1','7864ce65010ce8eb80d19799a4b7b91d0c9941f0404c7cb490039cf38048a84e','permits','refund-8','17571315fca2ab4d0b153158a94141a237fc5d939a2ea7f878388b3a823b7b53',2);
INSERT INTO events VALUES(40,'refund-9','recorded','a2','{"kind":"refund","payload_sha256":"f0905fe007f6d58ad3f33db95eb5e70262aa8947c3b62b5dfe110e2fa83fab97","redacted":false}',1796115609000,'7864ce65010ce8eb80d19799a4b7b91d0c9941f0404c7cb490039cf38048a84e','614dd131e0afc0297718473416a24c1c91d521b7e331f26bd1dd34861bf67773','payloads','refund-9','da07736bb27a261e6e7bd87d4a411197046ba3d37c715bdc0ef80165cdc207a8',2);
INSERT INTO events VALUES(41,'refund-9','policy_evaluated','a2','{"approvers":1,"mode":"auto","pattern":"refund","ttl_ms":0}',1796115609000,'614dd131e0afc0297718473416a24c1c91d521b7e331f26bd1dd34861bf67773','b88ed0caa1eebdfc9e0f2f6cac033d24551d105d79b2fa71bef68bea90117b81','policy_evals','refund-9','d920e741c8dc017a2e1bbd336811ed0704d7c45a6cbc68fd62fd7112504a3308',2);
INSERT INTO events VALUES(42,'refund-9','permit_issued','a2','{"lease_ms":1796116509000,"permit_id":"6bb041ec-ebd8-4c55-95d6-5d3512c673f7"}',1796115609000,'b88ed0caa1eebdfc9e0f2f6cac033d24551d105d79b2fa71bef68bea90117b81','cea8fb373c73e521b877d3eb5f9c74cab9c23eb9cf512e0ddf8cbd03694061c9','permits','refund-9','8e2826ff80ee156581edfbf47f8bd53cbf55ee11ad14c7020ecd7e5bd6197f44',2);
INSERT INTO events VALUES(43,'refund-0','report_accepted','d11b9fa2-be4a-453b-ac37-461a8b1d9200','{"latency_ms":0,"outcome":"succeeded","ref":"ref-0"}',1796115610000,'cea8fb373c73e521b877d3eb5f9c74cab9c23eb9cf512e0ddf8cbd03694061c9','76f26e6afbc81baf04fd2a6ae8024f212baa50a8eae29d1de6094bfa3d45ef54','reports','1','723a60572df482aa72cd4aaa806265e7ab4b0161e0771a53cf8b3e759d855530',2);
INSERT INTO events VALUES(44,'refund-1','report_accepted','cb3ac960-270f-44aa-aba9-4857081ee5be','{"latency_ms":0,"outcome":"succeeded","ref":"ref-1"}',1796115610000,'76f26e6afbc81baf04fd2a6ae8024f212baa50a8eae29d1de6094bfa3d45ef54','6599d872ccdf221bdb3d72359fe65b1ad65b4bbc40048cbffcdf78b5c67f5985','reports','2','2742702b2ddd126e1e5d952630842f6c135f364c3f51e7f0df6c8b3d3751ee63',2);
INSERT INTO events VALUES(45,'refund-2','report_accepted','b9232fcf-64a4-4043-9ce2-ba0d36be4b8f','{"latency_ms":0,"outcome":"succeeded","ref":"ref-2"}',1796115610000,'6599d872ccdf221bdb3d72359fe65b1ad65b4bbc40048cbffcdf78b5c67f5985','2fb075193219eb6438c863c92164803297a1dfdfaec6590731f63f384cb99b71','reports','3','a43c6121d38fa1a59c02035915c5c07a2381416688b0d6b9c894ba5cc5bc6da9',2);
INSERT INTO events VALUES(46,'refund-3','report_accepted','85d70bc3-f614-4090-a0ea-d4b73c70834a','{"latency_ms":0,"outcome":"succeeded","ref":"ref-3"}',1796115610000,'2fb075193219eb6438c863c92164803297a1dfdfaec6590731f63f384cb99b71','c45ae79a12108c50120bab997ec0081fe8c1d85ed005c0a7aa3ca1bd1c868a08','reports','4','5cb66f3998fc9b4c072a23d2c77b821bb5c0419157c2a27dea728a5e9523b1ff',2);
INSERT INTO events VALUES(47,'refund-4','report_accepted','1965c6fa-716c-4629-8553-f43a5b4c6df9','{"latency_ms":0,"outcome":"succeeded","ref":"ref-4"}',1796115610000,'c45ae79a12108c50120bab997ec0081fe8c1d85ed005c0a7aa3ca1bd1c868a08','95041eba5e455f49850b3bdbf9add4218d33d75e262420744fe80c8746c9aebf','reports','5','4ed1bce2c91ee7be3d9e1e4348c509994afe3dfefb88e7b91ff3bd3b6e8b6d7f',2);
INSERT INTO events VALUES(48,'refund-5','report_accepted','bf0288f7-c4fc-4f63-be98-f067f54d8ac4','{"latency_ms":0,"outcome":"failed","ref":"ref-5"}',1796115610000,'95041eba5e455f49850b3bdbf9add4218d33d75e262420744fe80c8746c9aebf','79b34856154bfe9073f33ec868633bf078a5179fa0de237661bdf7becb14ea74','reports','6','5e86bfeb75a7778fbafe2a19e518ab2c435338b3816b425c9d259d14c23309cf',2);
INSERT INTO events VALUES(49,'wire-0','recorded','a3','{"kind":"wire","payload_sha256":"54c23f8a2eaba22cf75a8425fe0bfb398acab951634b629e782933f127476200","redacted":false}',1796115610000,'79b34856154bfe9073f33ec868633bf078a5179fa0de237661bdf7becb14ea74','697b228b49f64b0d10f7f694dff4afebd2d46f003c160a4097e63fa338528d2b','payloads','wire-0','6ba0cdf2573a81c982a4ed73f752e2eae80a031ffa2eebbba38b3e8c0492f943',2);
INSERT INTO events VALUES(50,'wire-0','policy_evaluated','a3','{"approvers":1,"mode":"approval","pattern":"wire","ttl_ms":86400000}',1796115610000,'697b228b49f64b0d10f7f694dff4afebd2d46f003c160a4097e63fa338528d2b','40552f4afb39bd9cee543d61c17f593d76c3ae5c902e5635164e23a8fba2cb74','policy_evals','wire-0','3c06e0c55ffbfe6ba26cae509fd0863d33e44d51fe56117d8161ce38db64cd48',2);
INSERT INTO events VALUES(51,'wire-0','approval_requested','a3','{"expires_ms":1796202010000}',1796115610000,'40552f4afb39bd9cee543d61c17f593d76c3ae5c902e5635164e23a8fba2cb74','32fb4bc50deeb36e6cbf87d88661d1161945b9b498697a11cf6847d8e94e126d','approval_requests','wire-0','9c4493873d8471063324aaf255216c19c88ecbac474a3aed58eabeea55d6628e',2);
INSERT INTO events VALUES(52,'wire-1','recorded','a3','{"kind":"wire","payload_sha256":"f328f89dacc2427666bf3454726e6a09c1070e1ccb02255405103be4115cbb78","redacted":false}',1796115610000,'32fb4bc50deeb36e6cbf87d88661d1161945b9b498697a11cf6847d8e94e126d','eed2c9ee07c04921177fd8405d706eec7ced8858170794b587d2fd55711ee31c','payloads','wire-1','64e7be447946795c6fdfa2976d3081bbd508e79b64dde6e9db7182f92bc71ec8',2);
INSERT INTO events VALUES(53,'wire-1','policy_evaluated','a3','{"approvers":1,"mode":"approval","pattern":"wire","ttl_ms":86400000}',1796115610000,'eed2c9ee07c04921177fd8405d706eec7ced8858170794b587d2fd55711ee31c','a790d046c0db0e5a47e6d03895317ce86172ac4bd162907a04e5b47ff1feed7c','policy_evals','wire-1','6392222ab5abe510680f8be4fe57982c6154def4992d266b9e9fb3a1b8c2904b',2);
INSERT INTO events VALUES(54,'wire-1','approval_requested','a3','{"expires_ms":1796202010000}',1796115610000,'a790d046c0db0e5a47e6d03895317ce86172ac4bd162907a04e5b47ff1feed7c','ff59d3b5f9fbab8561263aa45c06194ec915206b605144b92d1699d5927632ab','approval_requests','wire-1','abdf23cefa5f5e4986372d356a5f1e7c974c2535cb757853d26bc9c776dab00d',2);
INSERT INTO events VALUES(55,'wire-2','recorded','a3','{"kind":"wire","payload_sha256":"90f78b0696699f42101f8ca09c1f2c450cd59d2ac3dbb1dd8b10e34ca9a6172a","redacted":false}',1796115610000,'ff59d3b5f9fbab8561263aa45c06194ec915206b605144b92d1699d5927632ab','134e2d8610a982ab299a5c4e98793f4fdd55dcd0c465c632203bc09830c5aee2','payloads','wire-2','1ef20ed47ce0dd0261ffede5df529b8f927256bd6bfd75a9515b2310af18a4e4',2);
INSERT INTO events VALUES(56,'wire-2','policy_evaluated','a3','{"approvers":1,"mode":"approval","pattern":"wire","ttl_ms":86400000}',1796115610000,'134e2d8610a982ab299a5c4e98793f4fdd55dcd0c465c632203bc09830c5aee2','d076c98bcc637e0b1007d1fddaff2cc09ef405da5397ca2c3bc2eae75656902a','policy_evals','wire-2','4f428b4690951f78f2ecf7b1f57489387e1aeea2ad1ae1e78076deff217e0520',2);
INSERT INTO events VALUES(57,'wire-2','approval_requested','a3','{"expires_ms":1796202010000}',1796115610000,'d076c98bcc637e0b1007d1fddaff2cc09ef405da5397ca2c3bc2eae75656902a','fe56d10300270ea147fd9254da0d1af29ec942f9c7050a3cfd9af3f333f228c0','approval_requests','wire-2','b4295e105ce01eea762cd10e4bf5ce72073a21edd4b160b11468ec85dcb9426b',2);
INSERT INTO events VALUES(58,'wire-3','recorded','a3','{"kind":"wire","payload_sha256":"49c32b95715b3dbd621e5b1ad52ecc1f256770eb31bbea3c4be31fd1a997f068","redacted":false}',1796115610000,'fe56d10300270ea147fd9254da0d1af29ec942f9c7050a3cfd9af3f333f228c0','ea4c6935151d4328c001906eb8236f8708ec4e2e258b60065956b455bcd8f60e','payloads','wire-3','53a32988ae5d29a871e09b845eb67b388f33d00001af363e6b167638d0c4c7b9',2);
INSERT INTO events VALUES(59,'wire-3','policy_evaluated','a3','{"approvers":1,"mode":"approval","pattern":"wire","ttl_ms":86400000}',1796115610000,'ea4c6935151d4328c001906eb8236f8708ec4e2e258b60065956b455bcd8f60e','135bf6192cdab948868536ecc0a88a404e4195f948871ff2d729f0d2857e74c3','policy_evals','wire-3','b0f140ef4b8c81ca6d05da836199798805c1f4e5ff0d80890dc6300d8e7ff10c',2);
INSERT INTO events VALUES(60,'wire-3','approval_requested','a3','{"expires_ms":1796202010000}',1796115610000,'135bf6192cdab948868536ecc0a88a404e4195f948871ff2d729f0d2857e74c3','a32b792193853d039cb0d42b3dcbd20b4549f0d2108d87a0d116958634e756d0','approval_requests','wire-3','a8df4d2e285bca01804303ece5b2b96319f44ac3332d5da3bec105be1195284b',2);
INSERT INTO events VALUES(61,'wire-4','recorded','a3','{"kind":"wire","payload_sha256":"8c7ce06e6793200c1a98f418c413d21f4b0c74b3bbdc490093d7041f841dddf3","redacted":false}',1796115610000,'a32b792193853d039cb0d42b3dcbd20b4549f0d2108d87a0d116958634e756d0','efb879c9093f41b33ad8f80304d21631cbce51f693aaf9a85d63c3ccbe4d34b4','payloads','wire-4','3ff23262e5355200bc7300bc3618297d1e05b381bbff44bd6056116531d135ad',2);
INSERT INTO events VALUES(62,'wire-4','policy_evaluated','a3','{"approvers":1,"mode":"approval","pattern":"wire","ttl_ms":86400000}',1796115610000,'efb879c9093f41b33ad8f80304d21631cbce51f693aaf9a85d63c3ccbe4d34b4','1841c1ba5a3512240eedd76494c670d47d9a2b666240e1e883f41ff9d9100b16','policy_evals','wire-4','7f49327b4dba8490d15a828924f3b49da07a5b52a149d049dd4cf01db37bad0e',2);
INSERT INTO events VALUES(63,'wire-4','approval_requested','a3','{"expires_ms":1796202010000}',1796115610000,'1841c1ba5a3512240eedd76494c670d47d9a2b666240e1e883f41ff9d9100b16','15a7b911737794d3ff87eca718fb039376df6b512b29b866b40cf6e54e1dd586','approval_requests','wire-4','a7d4958587bf79abc777f8047074963465acdd577e4afa257fbbce780632922f',2);
INSERT INTO events VALUES(64,'wire-5','recorded','a3','{"kind":"wire","payload_sha256":"5f01b5b9ff93d974612c4b410527a9664b669fa0f63696e0fab7bfa59ef5dc2e","redacted":false}',1796115610000,'15a7b911737794d3ff87eca718fb039376df6b512b29b866b40cf6e54e1dd586','51d33ed62b55f16747484b1b96625c49885517baaaf95f149e0b7afefbe20368','payloads','wire-5','5069a5c25d75c1298d4d997633e876189719aa7eb1920f2e42aefcc3c15d41cd',2);
INSERT INTO events VALUES(65,'wire-5','policy_evaluated','a3','{"approvers":1,"mode":"approval","pattern":"wire","ttl_ms":86400000}',1796115610000,'51d33ed62b55f16747484b1b96625c49885517baaaf95f149e0b7afefbe20368','8f87913b7a06fb5a665ffa4b3fdbdc3d2efd35f058b69c80b935ea7dcd398e7e','policy_evals','wire-5','21e5a1725e4f7f93f9391a2eae2065b40ffaa73ccde93067cd36be96ff1c4ae2',2);
INSERT INTO events VALUES(66,'wire-5','approval_requested','a3','{"expires_ms":1796202010000}',1796115610000,'8f87913b7a06fb5a665ffa4b3fdbdc3d2efd35f058b69c80b935ea7dcd398e7e','a913f8bad4367d696414c67e763b64ee84f8c19fb9fdfd856129491488a5969f','approval_requests','wire-5','4d73f966d37bd9dea4a348e05dc3701416bbcbb8398f41c8948df38f3e90486c',2);
INSERT INTO events VALUES(67,'wire-0','vote','alice','{"decision":"approved","reason":"ok"}',1796115610000,'a913f8bad4367d696414c67e763b64ee84f8c19fb9fdfd856129491488a5969f','2def93b19f197b55d987621b81ebeceb7758aa80b8de37e3ebe780aa8f2573e0','votes','1','8067d8dfe4846ab1aeb01e97a7247aba601dc6b76bc56e63cf6328727b4d3cb8',2);
INSERT INTO events VALUES(68,'wire-0','approved','alice','{"reason":"ok"}',1796115610000,'2def93b19f197b55d987621b81ebeceb7758aa80b8de37e3ebe780aa8f2573e0','3f54e6b163ca109fd61f426c40e2f14b18bbd5659910f0e60eb941b83a66e8b9','decisions','wire-0','ac94fe244638a9110a8613fe8b0eaf61650710af0030680a8d41abc3019bacd9',2);
INSERT INTO events VALUES(69,'wire-1','vote','alice','{"decision":"approved","reason":"ok"}',1796115610000,'3f54e6b163ca109fd61f426c40e2f14b18bbd5659910f0e60eb941b83a66e8b9','b0054a66fa1fbb612ee58a177874cadea7339e6f6488e65f4f7878f40ab8833d','votes','2','b63988865bbeef1653c67267ffeb53d5719a44e7d2083321b592228e32d9e349',2);
INSERT INTO events VALUES(70,'wire-1','approved','alice','{"reason":"ok"}',1796115610000,'b0054a66fa1fbb612ee58a177874cadea7339e6f6488e65f4f7878f40ab8833d','205763dece8bd21de95d2b74c5e6fb57083249f929744d498af9de18bbb8c549','decisions','wire-1','e0a5857c79fd6415e3374ca68fb24855132c3a343a9fac1ec9ea2046d9da65b8',2);
INSERT INTO events VALUES(71,'wire-2','vote','alice','{"decision":"rejected","reason":"no"}',1796115610000,'205763dece8bd21de95d2b74c5e6fb57083249f929744d498af9de18bbb8c549','987e999464d69ea902ee102a3e0e91af00fa74aaec3475eb681a22a50d5877c3','votes','3','e76026d2fdf453ac92ff6df7eea8876f8a81ef2242b5391b2c77774d1fd8085b',2);
INSERT INTO events VALUES(72,'wire-2','rejected','alice','{"reason":"no"}',1796115610000,'987e999464d69ea902ee102a3e0e91af00fa74aaec3475eb681a22a50d5877c3','7ba7b68dca665d166f322be6716b238552d52461bd59a42eaf6eb7ebf5b63d06','decisions','wire-2','61a79b0e41264ca732554e2defafb109a09cf59b8a4a0eaa327a26d6c45b4a0c',2);
INSERT INTO events VALUES(73,'wire-0','permit_issued','a3','{"lease_ms":1796116510000,"permit_id":"01b74938-22bb-4401-a926-ba1bf4e00a54"}',1796115610000,'7ba7b68dca665d166f322be6716b238552d52461bd59a42eaf6eb7ebf5b63d06','034b396bdd7d9e014c79d94c4f5e91fc559b411ea3301b836475fbbd208c512f','permits','wire-0','d79e78973e4e46a0d7177e160782944febab019cfff5760db897ddfd3efc09d1',2);
INSERT INTO events VALUES(74,'drop-0','recorded','a3','{"kind":"drop","payload_sha256":"f23e48a9b494fba98c8a68f6d5bc3dcb9b6682d03fa2110aafa350e32ff5d0b9","redacted":false}',1796115610000,'034b396bdd7d9e014c79d94c4f5e91fc559b411ea3301b836475fbbd208c512f','59a156429ae2fd0208aedc69c0019b5c84c00d561390e5fb5fe05de1b21aaa60','payloads','drop-0','4256f742f8adb5d7539da9523456a62ef0f911be481726f6eaffb7a5254204f7',2);
INSERT INTO events VALUES(75,'drop-0','policy_evaluated','a3','{"approvers":1,"mode":"deny","pattern":"drop","ttl_ms":0}',1796115610000,'59a156429ae2fd0208aedc69c0019b5c84c00d561390e5fb5fe05de1b21aaa60','2d33709705a2a86e59de64a3694de32458e12756e174db11198a061dc86782c9','policy_evals','drop-0','fc580aa444a0c67f854e14fc822978732ffb7aef337def807fbb67c01f5548e4',2);
INSERT INTO events VALUES(76,'refund-0','conflict','a2','{"attempted_sha256":"4dedacc81545561647b41c1092ca4034fc19569104df574d1e3a26458295e6dd","conflict_id":1,"differs":"body"}',1796115610000,'2d33709705a2a86e59de64a3694de32458e12756e174db11198a061dc86782c9','876414390cff3a36b4a716c5d76dde632e8946158860796e3325f6a2e33b89a9','conflicts','1','fcd2bbcdb6ebe6b90e17a21fb0e0fffdc9b983cce9ffa0d5d517e75fee2c947a',2);
INSERT INTO events VALUES(77,'rec-1','conflict','a1','{"attempted_sha256":"ab34044ea285643e230d0339abdd5392d76004acc4c9fdb32c3a796033ce1ac2","conflict_id":2,"differs":"body"}',1796115610000,'876414390cff3a36b4a716c5d76dde632e8946158860796e3325f6a2e33b89a9','59850fdda85e5511c2710276baf3b242a639a132702ae4d64bbe6505887c2855','conflicts','2','ef6373bfd7fb371e1766c421824f66099fa5161ec4f4614377d7ff16336aa951',2);
INSERT INTO events VALUES(78,'rec-1','conflict_reviewed','alice','{"conflict_id":2,"note":"seen"}',1796115610000,'59850fdda85e5511c2710276baf3b242a639a132702ae4d64bbe6505887c2855','79a7328120b54ab9d366d219d45e8e180b51b8df6dff15af5c10eddcf999fe98','conflict_reviews','2','275c551fb4a27501866e6f03f0727014100f3436de3b4fd4f4a484335493c233',2);
INSERT INTO events VALUES(79,'refund-6','reconciled','alice','{"note":"checked the bank","result":"executed"}',1796122810000,'79a7328120b54ab9d366d219d45e8e180b51b8df6dff15af5c10eddcf999fe98','16c7cd1e6e4f565f48e7ac78b49b40d820cb7b238bd0168764572b85a4f617c2','reconciliations','refund-6','9881c380efb62597cc4e115760486bff88feb4e2cd7ba707f67e1b52c55ba2a1',2);
INSERT INTO events VALUES(80,'','epoch_activated','alice','{"epoch":"65ad89ac-9b54-465b-88a4-42fd2842ec25"}',1796122810000,'16c7cd1e6e4f565f48e7ac78b49b40d820cb7b238bd0168764572b85a4f617c2','ddb590ed03d3f65aa8983665bbf680b6b5990dddc045a83eed7f653e6dc4085e','epochs','1','40436a28eb033b35b3ef6ed2a6569bc9d6c47e609eab395c43f0b6f0724ff063',2);
INSERT INTO events VALUES(81,'wire-3','fenced','a3','{"fenced_id":1,"reason":"pending under epoch \"\" when epoch 65ad89ac-9b54-465b-88a4-42fd2842ec25 was activated: it can no longer be approved; use a key under the active epoch"}',1796122810000,'ddb590ed03d3f65aa8983665bbf680b6b5990dddc045a83eed7f653e6dc4085e','f164ebbab41d6c01858fc2536908f8624d7df799ec2bcefc917915e8ff797370','fenced','1','aa55d0dc685c064896f286e79d4ed99b7b4e3818371ec70dd26394d5842e7b1b',2);
INSERT INTO events VALUES(82,'wire-4','fenced','a3','{"fenced_id":2,"reason":"pending under epoch \"\" when epoch 65ad89ac-9b54-465b-88a4-42fd2842ec25 was activated: it can no longer be approved; use a key under the active epoch"}',1796122810000,'f164ebbab41d6c01858fc2536908f8624d7df799ec2bcefc917915e8ff797370','01bfecff4f5bc78c641b3fbd174d808ace4819d24321bd740c5e339f4bcb1d8c','fenced','2','a02f299d8d0c6e29484eca1819106d607a89eeb0efd10781cbcac3dd1f23c24f',2);
INSERT INTO events VALUES(83,'wire-5','fenced','a3','{"fenced_id":3,"reason":"pending under epoch \"\" when epoch 65ad89ac-9b54-465b-88a4-42fd2842ec25 was activated: it can no longer be approved; use a key under the active epoch"}',1796122810000,'01bfecff4f5bc78c641b3fbd174d808ace4819d24321bd740c5e339f4bcb1d8c','12749b3c8ae7dc30e87ed4c7346b4ce408f527cf25bd9249898bd21f54a879a2','fenced','3','fe012198054418abfce4fe75cf2d58041db7b20537294ce8be2bfb7996cd4364',2);
INSERT INTO events VALUES(84,'hsr1:65ad89ac-9b54-465b-88a4-42fd2842ec25:refund-x','recorded','a2','{"kind":"refund","payload_sha256":"c55909ed6fe4b238fe40827b1c830327c8ec4acf4a396313ebcbc6cd6b4b1f59","redacted":false}',1796122810000,'12749b3c8ae7dc30e87ed4c7346b4ce408f527cf25bd9249898bd21f54a879a2','0947a7c16a0f4c81d772bc9c694aaad38929678a183da40c6def49ea1cbb005e','payloads','hsr1:65ad89ac-9b54-465b-88a4-42fd2842ec25:refund-x','a97e40f12960570ed1351a3e552a410ce89b24610a6cfd046e25eba4c95085ef',2);
INSERT INTO events VALUES(85,'hsr1:65ad89ac-9b54-465b-88a4-42fd2842ec25:refund-x','policy_evaluated','a2','{"approvers":1,"mode":"auto","pattern":"refund","ttl_ms":0}',1796122810000,'0947a7c16a0f4c81d772bc9c694aaad38929678a183da40c6def49ea1cbb005e','ce587900482322165f0f5c783a0e54577c1dfe25914c036b2a4b5d21e63984fe','policy_evals','hsr1:65ad89ac-9b54-465b-88a4-42fd2842ec25:refund-x','6ecfadb5c8735a0fea19c9573245950b749aaf5fbd9168935e185ae90c40be39',2);
INSERT INTO events VALUES(86,'hsr1:65ad89ac-9b54-465b-88a4-42fd2842ec25:refund-x','permit_issued','a2','{"lease_ms":1796123710000,"permit_id":"958c12c6-e245-4e7d-ae62-130759b11bb0"}',1796122810000,'ce587900482322165f0f5c783a0e54577c1dfe25914c036b2a4b5d21e63984fe','509b546bd52a1c8d295050da6ac92385de618d97ce602f58a15b3ce073758df7','permits','hsr1:65ad89ac-9b54-465b-88a4-42fd2842ec25:refund-x','71c2d657be9e98fabd9b8af02591902ade9ebbcadbd9ed9ebf6b97da1a412cc9',2);
INSERT INTO events VALUES(87,'refund-late','fenced','a2','{"fenced_id":4,"reason":"new work must use hsr1:65ad89ac-9b54-465b-88a4-42fd2842ec25:\u003clogical-key\u003e"}',1796122810000,'509b546bd52a1c8d295050da6ac92385de618d97ce602f58a15b3ce073758df7','d6f01de1a110ffc28cc8fac0048ce00716d8109b95aeb630bd71568882bf9ba5','fenced','4','dcf7c579995c49c58198b51f37644cd03430824f860e47dc4106e0ee110aa2ff',2);
CREATE TABLE action_index (
    id          INTEGER PRIMARY KEY,
    action_key  TEXT NOT NULL UNIQUE,
    logical_key TEXT NOT NULL,
    epoch       TEXT NOT NULL DEFAULT '',
    kind        TEXT NOT NULL DEFAULT '',
    agent       TEXT NOT NULL DEFAULT '',
    stage       TEXT NOT NULL DEFAULT 'recorded' CHECK(stage IN ('recorded','pending','approved','denied','rejected','executing','uncertain','succeeded','failed','reconciled')),
    deadline_ms INTEGER NOT NULL DEFAULT 0,
    updated_ms  INTEGER NOT NULL DEFAULT 0,
    -- Copies of the intent's facts, so that a retry is answered by one
    -- index lookup (verify checks that they agree with the facts).
    payload_sha256 TEXT NOT NULL,
    retained    INTEGER NOT NULL DEFAULT 0,
    redacted    INTEGER NOT NULL DEFAULT 0
, target TEXT NOT NULL DEFAULT '', context_sha256 TEXT NOT NULL DEFAULT '') STRICT;
INSERT INTO action_index VALUES(1,'rec-0','rec-0','','note','a1','recorded',0,1796115600000,'ef000e9243545e0e9c8b34b07f564fdde834a98be2fd1de57b019fda432a68d4',1,1,'','');
INSERT INTO action_index VALUES(2,'rec-1','rec-1','','note','a1','recorded',0,1796115600000,'c5855d2f013c5a68b20efcfc861c62e19f349a942c7689213a5ce1dcced061c1',1,0,'t','');
INSERT INTO action_index VALUES(3,'rec-2','rec-2','','note','a1','recorded',0,1796115600000,'da5c3b2e2cb66e480dce1ec07e2961481fb7994a95804787d6ed93a4fb644f2a',1,0,'t','');
INSERT INTO action_index VALUES(4,'rec-3','rec-3','','note','a1','recorded',0,1796115600000,'ec17f98752da0bdea309ecd052706bbcce337a9188bcaeb96f62097b0b4b2822',1,1,'','');
INSERT INTO action_index VALUES(5,'rec-4','rec-4','','note','a1','recorded',0,1796115600000,'806801b02a4ae05354647e4ecb94bf6a085e29e36d41f14a31f31fcd0d40b81b',1,0,'t','');
INSERT INTO action_index VALUES(6,'rec-5','rec-5','','note','a1','recorded',0,1796115600000,'e730aa6ad29ab9ce6a5b5eb8242038105089e0cf5d1ef195790f0f3269cb8869',1,0,'t','');
INSERT INTO action_index VALUES(7,'rec-6','rec-6','','note','a1','recorded',0,1796115600000,'491ff3efd5808b466f59a0e142ac0d13a1462e2c92d16743600332b1a12e25e9',1,1,'','');
INSERT INTO action_index VALUES(8,'rec-7','rec-7','','note','a1','recorded',0,1796115600000,'831a7223c88a0349e2f33c2b6b2c609e67c497659e9d64ca00b0cdd810d844e4',1,0,'t','');
INSERT INTO action_index VALUES(9,'refund-0','refund-0','','refund','a2','succeeded',0,1796115610000,'73e1917bf4d95d9a3420a8dde1745896153abc913ac1eff59ef3b1d7435c9f0d',1,0,'acct-0','');
INSERT INTO action_index VALUES(10,'refund-1','refund-1','','refund','a2','succeeded',0,1796115610000,'ecf43d1b0289b0971f43077d699b291b584e28d04aa751f39222e9c4f3ea716c',1,0,'acct-1','');
INSERT INTO action_index VALUES(11,'refund-2','refund-2','','refund','a2','succeeded',0,1796115610000,'11c0377d034f5914409ac471f1b50e09013d04034fb54d7ae3aca355837e6ce6',1,0,'acct-2','');
INSERT INTO action_index VALUES(12,'refund-3','refund-3','','refund','a2','succeeded',0,1796115610000,'4fb793483ab60a701330546d424637fb98026e0b728a09e5669699acb79b92b5',1,0,'acct-3','');
INSERT INTO action_index VALUES(13,'refund-4','refund-4','','refund','a2','succeeded',0,1796115610000,'dae5bb3ac9e6ce82b7ad58795ad3cb8255c6dee20da3f17c742fd418752f5664',1,0,'acct-4','');
INSERT INTO action_index VALUES(14,'refund-5','refund-5','','refund','a2','failed',0,1796115610000,'47b3313857392fa32e8df5825ce744ec7a93dd2dd3c29e9f69bf910e6c961b88',1,0,'acct-5','');
INSERT INTO action_index VALUES(15,'refund-6','refund-6','','refund','a2','reconciled',0,1796122810000,'be888b508e731520cba33ef2ae4eb8b90529efc8690ce2a80ae9eff101936444',1,0,'acct-6','');
INSERT INTO action_index VALUES(16,'refund-7','refund-7','','refund','a2','executing',1796116507000,1796115607000,'703a0f82a32fbf4089c7c9f31f909deb3b736d814bbea3b45f1053ef2dcf8c3f',1,0,'acct-7','');
INSERT INTO action_index VALUES(17,'refund-8','refund-8','','refund','a2','executing',1796116508000,1796115608000,'829df957bb49df7341afb5471c51a99d897789026a7952a4b05603004ec25422',1,0,'acct-8','');
INSERT INTO action_index VALUES(18,'refund-9','refund-9','','refund','a2','executing',1796116509000,1796115609000,'f0905fe007f6d58ad3f33db95eb5e70262aa8947c3b62b5dfe110e2fa83fab97',1,0,'acct-9','');
INSERT INTO action_index VALUES(19,'wire-0','wire-0','','wire','a3','executing',1796116510000,1796115610000,'54c23f8a2eaba22cf75a8425fe0bfb398acab951634b629e782933f127476200',1,0,'bank','');
INSERT INTO action_index VALUES(20,'wire-1','wire-1','','wire','a3','approved',0,1796115610000,'f328f89dacc2427666bf3454726e6a09c1070e1ccb02255405103be4115cbb78',1,0,'bank','');
INSERT INTO action_index VALUES(21,'wire-2','wire-2','','wire','a3','rejected',0,1796115610000,'90f78b0696699f42101f8ca09c1f2c450cd59d2ac3dbb1dd8b10e34ca9a6172a',1,0,'bank','');
INSERT INTO action_index VALUES(22,'wire-3','wire-3','','wire','a3','pending',1796202010000,1796115610000,'49c32b95715b3dbd621e5b1ad52ecc1f256770eb31bbea3c4be31fd1a997f068',1,0,'bank','');
INSERT INTO action_index VALUES(23,'wire-4','wire-4','','wire','a3','pending',1796202010000,1796115610000,'8c7ce06e6793200c1a98f418c413d21f4b0c74b3bbdc490093d7041f841dddf3',1,0,'bank','');
INSERT INTO action_index VALUES(24,'wire-5','wire-5','','wire','a3','pending',1796202010000,1796115610000,'5f01b5b9ff93d974612c4b410527a9664b669fa0f63696e0fab7bfa59ef5dc2e',1,0,'bank','');
INSERT INTO action_index VALUES(25,'drop-0','drop-0','','drop','a3','denied',0,1796115610000,'f23e48a9b494fba98c8a68f6d5bc3dcb9b6682d03fa2110aafa350e32ff5d0b9',1,0,'db','');
INSERT INTO action_index VALUES(26,'hsr1:65ad89ac-9b54-465b-88a4-42fd2842ec25:refund-x','refund-x','65ad89ac-9b54-465b-88a4-42fd2842ec25','refund','a2','executing',1796123710000,1796122810000,'c55909ed6fe4b238fe40827b1c830327c8ec4acf4a396313ebcbc6cd6b4b1f59',1,0,'acct-x','');
CREATE TABLE policy_rules (
    id          INTEGER PRIMARY KEY,
    pattern     TEXT NOT NULL CHECK(length(pattern) BETWEEN 1 AND 200),
    mode        TEXT NOT NULL CHECK(mode IN ('auto', 'approval', 'deny')),
    ttl_ms      INTEGER NOT NULL CHECK(ttl_ms >= 0),
    operator    TEXT NOT NULL,
    set_ms      INTEGER NOT NULL
, approvers INTEGER NOT NULL DEFAULT 1 CHECK(approvers BETWEEN 1 AND 9), condition TEXT NOT NULL DEFAULT '' CHECK(length(condition) <= 2000), priority INTEGER NOT NULL DEFAULT 0 CHECK(priority BETWEEN -1000 AND 1000)) STRICT;
INSERT INTO policy_rules VALUES(1,'refund','auto',0,'root',1796115600000,1,'',0);
INSERT INTO policy_rules VALUES(2,'wire','approval',86400000,'root',1796115600000,1,'',0);
INSERT INTO policy_rules VALUES(3,'drop','deny',0,'root',1796115600000,1,'',0);
CREATE TABLE policy_evals (
    action_key  TEXT PRIMARY KEY REFERENCES intents(action_key),
    mode        TEXT NOT NULL CHECK(mode IN ('auto', 'approval', 'deny')),
    ttl_ms      INTEGER NOT NULL,
    rule_id     INTEGER REFERENCES policy_rules(id),
    pattern     TEXT NOT NULL,
    at_ms       INTEGER NOT NULL
, approvers INTEGER NOT NULL DEFAULT 1 CHECK(approvers BETWEEN 1 AND 9), explain TEXT NOT NULL DEFAULT '') STRICT;
INSERT INTO policy_evals VALUES('refund-0','auto',0,1,'refund',1796115600000,1,'');
INSERT INTO policy_evals VALUES('refund-1','auto',0,1,'refund',1796115601000,1,'');
INSERT INTO policy_evals VALUES('refund-2','auto',0,1,'refund',1796115602000,1,'');
INSERT INTO policy_evals VALUES('refund-3','auto',0,1,'refund',1796115603000,1,'');
INSERT INTO policy_evals VALUES('refund-4','auto',0,1,'refund',1796115604000,1,'');
INSERT INTO policy_evals VALUES('refund-5','auto',0,1,'refund',1796115605000,1,'');
INSERT INTO policy_evals VALUES('refund-6','auto',0,1,'refund',1796115606000,1,'');
INSERT INTO policy_evals VALUES('refund-7','auto',0,1,'refund',1796115607000,1,'');
INSERT INTO policy_evals VALUES('refund-8','auto',0,1,'refund',1796115608000,1,'');
INSERT INTO policy_evals VALUES('refund-9','auto',0,1,'refund',1796115609000,1,'');
INSERT INTO policy_evals VALUES('wire-0','approval',86400000,2,'wire',1796115610000,1,'');
INSERT INTO policy_evals VALUES('wire-1','approval',86400000,2,'wire',1796115610000,1,'');
INSERT INTO policy_evals VALUES('wire-2','approval',86400000,2,'wire',1796115610000,1,'');
INSERT INTO policy_evals VALUES('wire-3','approval',86400000,2,'wire',1796115610000,1,'');
INSERT INTO policy_evals VALUES('wire-4','approval',86400000,2,'wire',1796115610000,1,'');
INSERT INTO policy_evals VALUES('wire-5','approval',86400000,2,'wire',1796115610000,1,'');
INSERT INTO policy_evals VALUES('drop-0','deny',0,3,'drop',1796115610000,1,'');
INSERT INTO policy_evals VALUES('hsr1:65ad89ac-9b54-465b-88a4-42fd2842ec25:refund-x','auto',0,1,'refund',1796122810000,1,'');
CREATE TABLE approval_requests (
    action_key    TEXT PRIMARY KEY REFERENCES intents(action_key),
    agent         TEXT NOT NULL,
    requested_ms  INTEGER NOT NULL,
    expires_ms    INTEGER NOT NULL CHECK(expires_ms > requested_ms)
) STRICT;
INSERT INTO approval_requests VALUES('wire-0','a3',1796115610000,1796202010000);
INSERT INTO approval_requests VALUES('wire-1','a3',1796115610000,1796202010000);
INSERT INTO approval_requests VALUES('wire-2','a3',1796115610000,1796202010000);
INSERT INTO approval_requests VALUES('wire-3','a3',1796115610000,1796202010000);
INSERT INTO approval_requests VALUES('wire-4','a3',1796115610000,1796202010000);
INSERT INTO approval_requests VALUES('wire-5','a3',1796115610000,1796202010000);
CREATE TABLE decisions (
    action_key  TEXT PRIMARY KEY REFERENCES approval_requests(action_key),
    decision    TEXT NOT NULL CHECK(decision IN ('approved', 'rejected')),
    operator    TEXT NOT NULL CHECK(length(operator) > 0),
    reason      TEXT NOT NULL,
    at_ms       INTEGER NOT NULL,
    CHECK(decision = 'approved' OR length(reason) > 0)
) STRICT;
INSERT INTO decisions VALUES('wire-0','approved','alice','ok',1796115610000);
INSERT INTO decisions VALUES('wire-1','approved','alice','ok',1796115610000);
INSERT INTO decisions VALUES('wire-2','rejected','alice','no',1796115610000);
CREATE TABLE permits (
    action_key  TEXT PRIMARY KEY REFERENCES intents(action_key),
    permit_id   TEXT NOT NULL UNIQUE CHECK(length(permit_id) = 36),
    agent       TEXT NOT NULL,
    issued_ms   INTEGER NOT NULL,
    lease_ms    INTEGER NOT NULL CHECK(lease_ms > issued_ms)
) STRICT;
INSERT INTO permits VALUES('refund-0','d11b9fa2-be4a-453b-ac37-461a8b1d9200','a2',1796115600000,1796116500000);
INSERT INTO permits VALUES('refund-1','cb3ac960-270f-44aa-aba9-4857081ee5be','a2',1796115601000,1796116501000);
INSERT INTO permits VALUES('refund-2','b9232fcf-64a4-4043-9ce2-ba0d36be4b8f','a2',1796115602000,1796116502000);
INSERT INTO permits VALUES('refund-3','85d70bc3-f614-4090-a0ea-d4b73c70834a','a2',1796115603000,1796116503000);
INSERT INTO permits VALUES('refund-4','1965c6fa-716c-4629-8553-f43a5b4c6df9','a2',1796115604000,1796116504000);
INSERT INTO permits VALUES('refund-5','bf0288f7-c4fc-4f63-be98-f067f54d8ac4','a2',1796115605000,1796116505000);
INSERT INTO permits VALUES('refund-6','b528b507-3b61-47b5-aeea-0d065b2f5454','a2',1796115606000,1796116506000);
INSERT INTO permits VALUES('refund-7','68dbd47e-0e7a-49eb-9ed9-b58333e802e4','a2',1796115607000,1796116507000);
INSERT INTO permits VALUES('refund-8','e68a8b8b-7087-4f79-b47c-9436c20dfa9d','a2',1796115608000,1796116508000);
INSERT INTO permits VALUES('refund-9','6bb041ec-ebd8-4c55-95d6-5d3512c673f7','a2',1796115609000,1796116509000);
INSERT INTO permits VALUES('wire-0','01b74938-22bb-4401-a926-ba1bf4e00a54','a3',1796115610000,1796116510000);
INSERT INTO permits VALUES('hsr1:65ad89ac-9b54-465b-88a4-42fd2842ec25:refund-x','958c12c6-e245-4e7d-ae62-130759b11bb0','a2',1796122810000,1796123710000);
CREATE TABLE reports (
    id          INTEGER PRIMARY KEY,
    action_key  TEXT NOT NULL REFERENCES permits(action_key),
    permit_id   TEXT NOT NULL,
    outcome     TEXT NOT NULL CHECK(outcome IN ('succeeded', 'failed', 'unknown')),
    ref         TEXT NOT NULL,
    latency_ms  INTEGER NOT NULL CHECK(latency_ms >= 0),
    kind        TEXT NOT NULL CHECK(kind IN ('accepted', 'late', 'refused')),
    at_ms       INTEGER NOT NULL
, result TEXT NOT NULL DEFAULT '' CHECK(length(result) <= 65536)) STRICT;
INSERT INTO reports VALUES(1,'refund-0','d11b9fa2-be4a-453b-ac37-461a8b1d9200','succeeded','ref-0',0,'accepted',1796115610000,'');
INSERT INTO reports VALUES(2,'refund-1','cb3ac960-270f-44aa-aba9-4857081ee5be','succeeded','ref-1',0,'accepted',1796115610000,'');
INSERT INTO reports VALUES(3,'refund-2','b9232fcf-64a4-4043-9ce2-ba0d36be4b8f','succeeded','ref-2',0,'accepted',1796115610000,'');
INSERT INTO reports VALUES(4,'refund-3','85d70bc3-f614-4090-a0ea-d4b73c70834a','succeeded','ref-3',0,'accepted',1796115610000,'');
INSERT INTO reports VALUES(5,'refund-4','1965c6fa-716c-4629-8553-f43a5b4c6df9','succeeded','ref-4',0,'accepted',1796115610000,'');
INSERT INTO reports VALUES(6,'refund-5','bf0288f7-c4fc-4f63-be98-f067f54d8ac4','failed','ref-5',0,'accepted',1796115610000,'');
CREATE TABLE reconciliations (
    action_key  TEXT PRIMARY KEY REFERENCES permits(action_key),
    result      TEXT NOT NULL CHECK(result IN ('executed', 'not-executed')),
    operator    TEXT NOT NULL CHECK(length(operator) > 0),
    note        TEXT NOT NULL CHECK(length(note) > 0),
    at_ms       INTEGER NOT NULL
) STRICT;
INSERT INTO reconciliations VALUES('refund-6','executed','alice','checked the bank',1796122810000);
CREATE TABLE epochs (
    seq         INTEGER PRIMARY KEY,
    epoch       TEXT NOT NULL UNIQUE CHECK(length(epoch) = 36),
    operator    TEXT NOT NULL,
    at_ms       INTEGER NOT NULL
) STRICT;
INSERT INTO epochs VALUES(1,'65ad89ac-9b54-465b-88a4-42fd2842ec25','alice',1796122810000);
CREATE TABLE fenced (
    id          INTEGER PRIMARY KEY,
    action_key  TEXT NOT NULL,
    key_epoch   TEXT NOT NULL,
    active_epoch TEXT NOT NULL,
    payload_sha256 TEXT NOT NULL CHECK(length(payload_sha256) = 64),
    agent       TEXT NOT NULL,
    reason      TEXT NOT NULL,
    at_ms       INTEGER NOT NULL
) STRICT;
INSERT INTO fenced VALUES(1,'wire-3','','65ad89ac-9b54-465b-88a4-42fd2842ec25','49c32b95715b3dbd621e5b1ad52ecc1f256770eb31bbea3c4be31fd1a997f068','a3','pending under epoch "" when epoch 65ad89ac-9b54-465b-88a4-42fd2842ec25 was activated: it can no longer be approved; use a key under the active epoch',1796122810000);
INSERT INTO fenced VALUES(2,'wire-4','','65ad89ac-9b54-465b-88a4-42fd2842ec25','8c7ce06e6793200c1a98f418c413d21f4b0c74b3bbdc490093d7041f841dddf3','a3','pending under epoch "" when epoch 65ad89ac-9b54-465b-88a4-42fd2842ec25 was activated: it can no longer be approved; use a key under the active epoch',1796122810000);
INSERT INTO fenced VALUES(3,'wire-5','','65ad89ac-9b54-465b-88a4-42fd2842ec25','5f01b5b9ff93d974612c4b410527a9664b669fa0f63696e0fab7bfa59ef5dc2e','a3','pending under epoch "" when epoch 65ad89ac-9b54-465b-88a4-42fd2842ec25 was activated: it can no longer be approved; use a key under the active epoch',1796122810000);
INSERT INTO fenced VALUES(4,'refund-late','','65ad89ac-9b54-465b-88a4-42fd2842ec25','031354d334b04efdfa99b09b2c79c8ee45d346313ccee997580d73621dc1ab83','a2','new work must use hsr1:65ad89ac-9b54-465b-88a4-42fd2842ec25:<logical-key>',1796122810000);
CREATE TABLE conflict_reviews (
    conflict_id INTEGER PRIMARY KEY REFERENCES conflicts(id),
    operator    TEXT NOT NULL CHECK(length(operator) > 0),
    note        TEXT NOT NULL,
    at_ms       INTEGER NOT NULL
) STRICT;
INSERT INTO conflict_reviews VALUES(2,'alice','seen',1796115610000);
CREATE TABLE fenced_reviews (
    fenced_id   INTEGER PRIMARY KEY REFERENCES fenced(id),
    operator    TEXT NOT NULL CHECK(length(operator) > 0),
    note        TEXT NOT NULL,
    at_ms       INTEGER NOT NULL
) STRICT;
CREATE TABLE ledger_meta (
    one        INTEGER PRIMARY KEY CHECK(one = 1),
    ledger_id  TEXT NOT NULL CHECK(length(ledger_id) = 36),
    created_ms INTEGER NOT NULL
) STRICT;
INSERT INTO ledger_meta VALUES(1,'b08376f9-b84b-4660-8018-f08f85ca14d8',1796115600000);
CREATE TABLE report_refusals (
    id          INTEGER PRIMARY KEY,
    action_key  TEXT NOT NULL,
    permit_id   TEXT NOT NULL,
    outcome     TEXT NOT NULL,
    ref         TEXT NOT NULL,
    latency_ms  INTEGER NOT NULL,
    rule        TEXT NOT NULL,
    at_ms       INTEGER NOT NULL
) STRICT;
CREATE TABLE operators (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL CHECK(length(name) BETWEEN 1 AND 200),
    name_key    TEXT NOT NULL CHECK(length(name_key) > 0),
    action      TEXT NOT NULL CHECK(action IN ('add', 'remove')),
    public_key  TEXT NOT NULL,
    fingerprint TEXT NOT NULL CHECK(fingerprint LIKE 'SHA256:%'),
    at_ms       INTEGER NOT NULL
) STRICT;
CREATE TABLE signatures (
    id          INTEGER PRIMARY KEY,
    fact_table  TEXT NOT NULL,
    fact_row    TEXT NOT NULL,
    fingerprint TEXT NOT NULL CHECK(fingerprint LIKE 'SHA256:%'),
    signed_ms   INTEGER NOT NULL,
    signature   BLOB NOT NULL,
    at_ms       INTEGER NOT NULL,
    UNIQUE(fact_table, fact_row)
) STRICT;
CREATE TABLE votes (
    id          INTEGER PRIMARY KEY,
    action_key  TEXT NOT NULL REFERENCES approval_requests(action_key),
    decision    TEXT NOT NULL CHECK(decision IN ('approved', 'rejected')),
    operator    TEXT NOT NULL CHECK(length(operator) > 0),
    name_key    TEXT NOT NULL CHECK(length(name_key) > 0),
    reason      TEXT NOT NULL,
    at_ms       INTEGER NOT NULL,
    UNIQUE(action_key, name_key),
    CHECK(decision = 'approved' OR length(reason) > 0)
) STRICT;
INSERT INTO votes VALUES(1,'wire-0','approved','alice','alice','ok',1796115610000);
INSERT INTO votes VALUES(2,'wire-1','approved','alice','alice','ok',1796115610000);
INSERT INTO votes VALUES(3,'wire-2','rejected','alice','alice','no',1796115610000);
CREATE TABLE chain_head (
    one  INTEGER PRIMARY KEY CHECK (one = 1),
    seq  INTEGER NOT NULL CHECK (seq >= 0),
    hash TEXT NOT NULL CHECK (length(hash) = 64)
) STRICT;
INSERT INTO chain_head VALUES(1,87,'d6f01de1a110ffc28cc8fac0048ce00716d8109b95aeb630bd71568882bf9ba5');
CREATE TABLE archives (
    id               INTEGER PRIMARY KEY,
    file             TEXT NOT NULL CHECK(length(file) BETWEEN 1 AND 4096),
    ledger_id        TEXT NOT NULL,
    through_seq      INTEGER NOT NULL CHECK(through_seq >= 0),
    through_hash     TEXT NOT NULL CHECK(length(through_hash) = 64 AND through_hash NOT GLOB '*[^0-9a-f]*'),
    head_seq         INTEGER NOT NULL,
    head_hash        TEXT NOT NULL CHECK(length(head_hash) = 64 AND head_hash NOT GLOB '*[^0-9a-f]*'),
    keys             INTEGER NOT NULL CHECK(keys >= 0),
    keys_sha256      TEXT NOT NULL CHECK(length(keys_sha256) = 64 AND keys_sha256 NOT GLOB '*[^0-9a-f]*'),
    spans            INTEGER NOT NULL CHECK(spans >= 0),
    spans_sha256     TEXT NOT NULL CHECK(length(spans_sha256) = 64 AND spans_sha256 NOT GLOB '*[^0-9a-f]*'),
    settled_before_ms INTEGER NOT NULL,
    operator         TEXT NOT NULL,
    at_ms            INTEGER NOT NULL
) STRICT;
CREATE TABLE archived_keys (
    action_key     TEXT PRIMARY KEY,
    archive_id     INTEGER NOT NULL,
    state          TEXT NOT NULL CHECK(state IN ('denied','rejected','expired','succeeded','failed','reconciled')),
    result         TEXT NOT NULL DEFAULT '' CHECK(result IN ('','executed','not-executed')),
    context_sha256 TEXT NOT NULL DEFAULT ''
        CHECK(context_sha256 = '' OR (length(context_sha256) = 64 AND context_sha256 NOT GLOB '*[^0-9a-f]*'))
) STRICT, WITHOUT ROWID;
CREATE TABLE pruned_events (
    first_seq  INTEGER PRIMARY KEY,
    last_seq   INTEGER NOT NULL UNIQUE CHECK(last_seq >= first_seq),
    first_prev TEXT NOT NULL CHECK(length(first_prev) = 64 AND first_prev NOT GLOB '*[^0-9a-f]*'),
    last_hash  TEXT NOT NULL CHECK(length(last_hash) = 64 AND last_hash NOT GLOB '*[^0-9a-f]*'),
    archive_id INTEGER NOT NULL
) STRICT;
CREATE TABLE set_aside (
    id         INTEGER PRIMARY KEY,
    action_key TEXT NOT NULL,
    fact_table TEXT NOT NULL CHECK(fact_table = 'decisions'),
    row_json   TEXT NOT NULL CHECK(length(row_json) <= 20000),
    operator   TEXT NOT NULL,
    at_ms      INTEGER NOT NULL
) STRICT;
CREATE TRIGGER intents_hash_shape BEFORE INSERT ON intents
WHEN length(NEW.payload_sha256) != 64 OR NEW.payload_sha256 GLOB '*[^0-9a-f]*'
BEGIN SELECT RAISE(ABORT, 'intents.payload_sha256 must be 64 lowercase hex digits'); END;
CREATE TRIGGER intents_no_update BEFORE UPDATE ON intents
BEGIN SELECT RAISE(ABORT, 'intents is append-only'); END;
CREATE TRIGGER intents_no_delete BEFORE DELETE ON intents
BEGIN SELECT RAISE(ABORT, 'intents is append-only'); END;
CREATE INDEX conflicts_key ON conflicts(action_key);
CREATE INDEX events_key ON events(action_key, seq);
CREATE INDEX action_index_stage ON action_index(stage, deadline_ms);
CREATE INDEX action_index_logical ON action_index(logical_key);
CREATE INDEX action_index_agent ON action_index(agent, id);
CREATE INDEX action_index_kind ON action_index(kind, id);
CREATE INDEX action_index_epoch ON action_index(epoch, id);
CREATE TRIGGER action_index_no_delete BEFORE DELETE ON action_index
BEGIN SELECT RAISE(ABORT, 'action_index rows are never deleted'); END;
CREATE TRIGGER payloads_no_update BEFORE UPDATE ON payloads
BEGIN SELECT RAISE(ABORT, 'payloads is append-only'); END;
CREATE TRIGGER payloads_no_delete BEFORE DELETE ON payloads
BEGIN SELECT RAISE(ABORT, 'payloads is append-only'); END;
CREATE TRIGGER conflicts_no_update BEFORE UPDATE ON conflicts
BEGIN SELECT RAISE(ABORT, 'conflicts is append-only'); END;
CREATE TRIGGER conflicts_no_delete BEFORE DELETE ON conflicts
BEGIN SELECT RAISE(ABORT, 'conflicts is append-only'); END;
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events is append-only'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events is append-only'); END;
CREATE TRIGGER payloads_no_replace BEFORE INSERT ON payloads
WHEN EXISTS (SELECT 1 FROM payloads WHERE action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'payloads is append-only: a row is never replaced'); END;
CREATE TRIGGER conflicts_no_replace BEFORE INSERT ON conflicts
WHEN EXISTS (SELECT 1 FROM conflicts WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'conflicts is append-only: a row is never replaced'); END;
CREATE TRIGGER events_no_replace BEFORE INSERT ON events
WHEN EXISTS (SELECT 1 FROM events WHERE seq = NEW.seq OR hash = NEW.hash)
BEGIN SELECT RAISE(ABORT, 'events is append-only: a row is never replaced'); END;
CREATE TRIGGER action_index_no_replace BEFORE INSERT ON action_index
WHEN EXISTS (SELECT 1 FROM action_index WHERE id = NEW.id OR action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'action_index rows are never replaced'); END;
CREATE INDEX policy_rules_pattern ON policy_rules(pattern, id);
CREATE UNIQUE INDEX reports_one_accepted ON reports(action_key) WHERE kind = 'accepted';
CREATE INDEX reports_key ON reports(action_key, id);
CREATE INDEX fenced_key ON fenced(action_key);
CREATE TRIGGER policy_rules_no_update BEFORE UPDATE ON policy_rules
BEGIN SELECT RAISE(ABORT, 'policy_rules is append-only'); END;
CREATE TRIGGER policy_rules_no_delete BEFORE DELETE ON policy_rules
BEGIN SELECT RAISE(ABORT, 'policy_rules is append-only'); END;
CREATE TRIGGER policy_evals_no_update BEFORE UPDATE ON policy_evals
BEGIN SELECT RAISE(ABORT, 'policy_evals is append-only'); END;
CREATE TRIGGER policy_evals_no_delete BEFORE DELETE ON policy_evals
BEGIN SELECT RAISE(ABORT, 'policy_evals is append-only'); END;
CREATE TRIGGER approval_requests_no_update BEFORE UPDATE ON approval_requests
BEGIN SELECT RAISE(ABORT, 'approval_requests is append-only'); END;
CREATE TRIGGER approval_requests_no_delete BEFORE DELETE ON approval_requests
BEGIN SELECT RAISE(ABORT, 'approval_requests is append-only'); END;
CREATE TRIGGER decisions_no_update BEFORE UPDATE ON decisions
BEGIN SELECT RAISE(ABORT, 'decisions is append-only'); END;
CREATE TRIGGER decisions_no_delete BEFORE DELETE ON decisions
BEGIN SELECT RAISE(ABORT, 'decisions is append-only'); END;
CREATE TRIGGER permits_no_update BEFORE UPDATE ON permits
BEGIN SELECT RAISE(ABORT, 'permits is append-only'); END;
CREATE TRIGGER permits_no_delete BEFORE DELETE ON permits
BEGIN SELECT RAISE(ABORT, 'permits is append-only'); END;
CREATE TRIGGER reports_no_update BEFORE UPDATE ON reports
BEGIN SELECT RAISE(ABORT, 'reports is append-only'); END;
CREATE TRIGGER reports_no_delete BEFORE DELETE ON reports
BEGIN SELECT RAISE(ABORT, 'reports is append-only'); END;
CREATE TRIGGER reconciliations_no_update BEFORE UPDATE ON reconciliations
BEGIN SELECT RAISE(ABORT, 'reconciliations is append-only'); END;
CREATE TRIGGER reconciliations_no_delete BEFORE DELETE ON reconciliations
BEGIN SELECT RAISE(ABORT, 'reconciliations is append-only'); END;
CREATE TRIGGER epochs_no_update BEFORE UPDATE ON epochs
BEGIN SELECT RAISE(ABORT, 'epochs is append-only'); END;
CREATE TRIGGER epochs_no_delete BEFORE DELETE ON epochs
BEGIN SELECT RAISE(ABORT, 'epochs is append-only'); END;
CREATE TRIGGER fenced_no_update BEFORE UPDATE ON fenced
BEGIN SELECT RAISE(ABORT, 'fenced is append-only'); END;
CREATE TRIGGER fenced_no_delete BEFORE DELETE ON fenced
BEGIN SELECT RAISE(ABORT, 'fenced is append-only'); END;
CREATE TRIGGER conflict_reviews_no_update BEFORE UPDATE ON conflict_reviews
BEGIN SELECT RAISE(ABORT, 'conflict_reviews is append-only'); END;
CREATE TRIGGER conflict_reviews_no_delete BEFORE DELETE ON conflict_reviews
BEGIN SELECT RAISE(ABORT, 'conflict_reviews is append-only'); END;
CREATE TRIGGER fenced_reviews_no_update BEFORE UPDATE ON fenced_reviews
BEGIN SELECT RAISE(ABORT, 'fenced_reviews is append-only'); END;
CREATE TRIGGER fenced_reviews_no_delete BEFORE DELETE ON fenced_reviews
BEGIN SELECT RAISE(ABORT, 'fenced_reviews is append-only'); END;
CREATE TRIGGER policy_rules_no_replace BEFORE INSERT ON policy_rules
WHEN EXISTS (SELECT 1 FROM policy_rules WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'policy_rules is append-only: a row is never replaced'); END;
CREATE TRIGGER policy_evals_no_replace BEFORE INSERT ON policy_evals
WHEN EXISTS (SELECT 1 FROM policy_evals WHERE action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'policy_evals is append-only: a row is never replaced'); END;
CREATE TRIGGER approval_requests_no_replace BEFORE INSERT ON approval_requests
WHEN EXISTS (SELECT 1 FROM approval_requests WHERE action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'approval_requests is append-only: a row is never replaced'); END;
CREATE TRIGGER decisions_no_replace BEFORE INSERT ON decisions
WHEN EXISTS (SELECT 1 FROM decisions WHERE action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'decisions is append-only: a row is never replaced'); END;
CREATE TRIGGER permits_no_replace BEFORE INSERT ON permits
WHEN EXISTS (SELECT 1 FROM permits WHERE action_key = NEW.action_key OR permit_id = NEW.permit_id)
BEGIN SELECT RAISE(ABORT, 'permits is append-only: a row is never replaced'); END;
CREATE TRIGGER reports_no_replace BEFORE INSERT ON reports
WHEN EXISTS (SELECT 1 FROM reports WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'reports is append-only: a row is never replaced'); END;
CREATE TRIGGER reconciliations_no_replace BEFORE INSERT ON reconciliations
WHEN EXISTS (SELECT 1 FROM reconciliations WHERE action_key = NEW.action_key)
BEGIN SELECT RAISE(ABORT, 'reconciliations is append-only: a row is never replaced'); END;
CREATE TRIGGER epochs_no_replace BEFORE INSERT ON epochs
WHEN EXISTS (SELECT 1 FROM epochs WHERE seq = NEW.seq OR epoch = NEW.epoch)
BEGIN SELECT RAISE(ABORT, 'epochs is append-only: a row is never replaced'); END;
CREATE TRIGGER fenced_no_replace BEFORE INSERT ON fenced
WHEN EXISTS (SELECT 1 FROM fenced WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'fenced is append-only: a row is never replaced'); END;
CREATE TRIGGER conflict_reviews_no_replace BEFORE INSERT ON conflict_reviews
WHEN EXISTS (SELECT 1 FROM conflict_reviews WHERE conflict_id = NEW.conflict_id)
BEGIN SELECT RAISE(ABORT, 'conflict_reviews is append-only: a row is never replaced'); END;
CREATE TRIGGER fenced_reviews_no_replace BEFORE INSERT ON fenced_reviews
WHEN EXISTS (SELECT 1 FROM fenced_reviews WHERE fenced_id = NEW.fenced_id)
BEGIN SELECT RAISE(ABORT, 'fenced_reviews is append-only: a row is never replaced'); END;
CREATE INDEX events_fact ON events(fact_table, fact_row);
CREATE TRIGGER ledger_meta_no_update BEFORE UPDATE ON ledger_meta
BEGIN SELECT RAISE(ABORT, 'ledger_meta is append-only'); END;
CREATE TRIGGER ledger_meta_no_delete BEFORE DELETE ON ledger_meta
BEGIN SELECT RAISE(ABORT, 'ledger_meta is append-only'); END;
CREATE TRIGGER ledger_meta_no_replace BEFORE INSERT ON ledger_meta
WHEN EXISTS (SELECT 1 FROM ledger_meta)
BEGIN SELECT RAISE(ABORT, 'ledger_meta is append-only: a row is never replaced'); END;
CREATE INDEX report_refusals_key ON report_refusals(action_key, id);
CREATE TRIGGER report_refusals_no_update BEFORE UPDATE ON report_refusals
BEGIN SELECT RAISE(ABORT, 'report_refusals is append-only'); END;
CREATE TRIGGER report_refusals_no_delete BEFORE DELETE ON report_refusals
BEGIN SELECT RAISE(ABORT, 'report_refusals is append-only'); END;
CREATE TRIGGER report_refusals_no_replace BEFORE INSERT ON report_refusals
WHEN EXISTS (SELECT 1 FROM report_refusals WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'report_refusals is append-only: a row is never replaced'); END;
CREATE TRIGGER reports_no_replace_accepted BEFORE INSERT ON reports
WHEN NEW.kind = 'accepted' AND EXISTS (SELECT 1 FROM reports WHERE action_key = NEW.action_key AND kind = 'accepted')
BEGIN SELECT RAISE(ABORT, 'reports is append-only: an accepted report is never replaced'); END;
CREATE TRIGGER operators_no_update BEFORE UPDATE ON operators
BEGIN SELECT RAISE(ABORT, 'operators is append-only'); END;
CREATE TRIGGER operators_no_delete BEFORE DELETE ON operators
BEGIN SELECT RAISE(ABORT, 'operators is append-only'); END;
CREATE TRIGGER operators_no_replace BEFORE INSERT ON operators
WHEN EXISTS (SELECT 1 FROM operators WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'operators is append-only: a row is never replaced'); END;
CREATE TRIGGER signatures_no_update BEFORE UPDATE ON signatures
BEGIN SELECT RAISE(ABORT, 'signatures is append-only'); END;
CREATE TRIGGER signatures_no_delete BEFORE DELETE ON signatures
BEGIN SELECT RAISE(ABORT, 'signatures is append-only'); END;
CREATE TRIGGER signatures_no_replace BEFORE INSERT ON signatures
WHEN EXISTS (SELECT 1 FROM signatures WHERE id = NEW.id OR (fact_table = NEW.fact_table AND fact_row = NEW.fact_row))
BEGIN SELECT RAISE(ABORT, 'signatures is append-only: a row is never replaced'); END;
CREATE TRIGGER votes_no_update BEFORE UPDATE ON votes
BEGIN SELECT RAISE(ABORT, 'votes is append-only'); END;
CREATE TRIGGER votes_no_delete BEFORE DELETE ON votes
BEGIN SELECT RAISE(ABORT, 'votes is append-only'); END;
CREATE TRIGGER votes_no_replace BEFORE INSERT ON votes
WHEN EXISTS (SELECT 1 FROM votes WHERE id = NEW.id OR (action_key = NEW.action_key AND name_key = NEW.name_key))
BEGIN SELECT RAISE(ABORT, 'votes is append-only: a row is never replaced'); END;
CREATE TRIGGER chain_head_forward BEFORE UPDATE ON chain_head
WHEN NEW.one IS NOT OLD.one OR NEW.seq <= OLD.seq
BEGIN
    SELECT RAISE(ABORT, 'the chain head only moves forward');
END;
CREATE TRIGGER chain_head_kept BEFORE DELETE ON chain_head
BEGIN
    SELECT RAISE(ABORT, 'the chain head is never removed');
END;
CREATE UNIQUE INDEX signatures_once ON signatures(signature);
CREATE INDEX action_index_answer ON action_index(action_key,
    payload_sha256 || stage || ' ' || deadline_ms || ' ' || (retained + 2 * redacted) || context_sha256 || ' ' || agent);
CREATE TRIGGER archives_no_update BEFORE UPDATE ON archives
BEGIN SELECT RAISE(ABORT, 'archives is append-only'); END;
CREATE TRIGGER archives_no_delete BEFORE DELETE ON archives
BEGIN SELECT RAISE(ABORT, 'archives is append-only'); END;
CREATE TRIGGER archived_keys_no_update BEFORE UPDATE ON archived_keys
BEGIN SELECT RAISE(ABORT, 'archived_keys is append-only'); END;
CREATE TRIGGER archived_keys_no_delete BEFORE DELETE ON archived_keys
BEGIN SELECT RAISE(ABORT, 'archived_keys is append-only'); END;
CREATE TRIGGER pruned_events_no_update BEFORE UPDATE ON pruned_events
BEGIN SELECT RAISE(ABORT, 'pruned_events is append-only'); END;
CREATE TRIGGER pruned_events_no_delete BEFORE DELETE ON pruned_events
BEGIN SELECT RAISE(ABORT, 'pruned_events is append-only'); END;
CREATE INDEX set_aside_key ON set_aside(action_key, id);
CREATE TRIGGER set_aside_no_update BEFORE UPDATE ON set_aside
BEGIN SELECT RAISE(ABORT, 'set_aside is append-only'); END;
CREATE TRIGGER set_aside_no_delete BEFORE DELETE ON set_aside
BEGIN SELECT RAISE(ABORT, 'set_aside is append-only'); END;
CREATE TRIGGER intents_index AFTER INSERT ON intents
BEGIN
    SELECT RAISE(ABORT, 'intents is append-only: a key is never replaced')
    WHERE EXISTS (SELECT 1 FROM action_index WHERE action_key = NEW.action_key)
       OR EXISTS (SELECT 1 FROM archived_keys WHERE action_key = NEW.action_key);
    INSERT INTO action_index(action_key, logical_key, payload_sha256) VALUES (NEW.action_key, NEW.action_key, NEW.payload_sha256);
END;
COMMIT;
