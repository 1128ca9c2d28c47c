"""Report writers: each turns a CheckResult into one format."""
