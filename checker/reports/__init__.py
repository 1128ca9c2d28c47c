"""Report writers: each turns a CheckResult (or, for `mc list`, a model) into one format."""
