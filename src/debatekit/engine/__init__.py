"""The debate engine: a protocol's rules as nodes (:mod:`.nodes`), the commit boundary every
message crosses (:mod:`.boundary`), the async interpreter that plays one debate (:mod:`.play`),
records and replay (:mod:`.record`) and the mergeable summary of many debates (:mod:`.summary`)."""
