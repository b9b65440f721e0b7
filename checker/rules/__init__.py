"""The rule catalogue and the rule functions, one module per subject."""
