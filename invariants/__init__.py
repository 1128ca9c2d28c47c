"""Reusable invariants: small named predicates over the Kafka models' states."""
