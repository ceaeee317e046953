"""Tests of the vocabulary scripts (scripts/vocab)."""
