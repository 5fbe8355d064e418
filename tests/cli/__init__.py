"""Tests of the battlement command (host/battlement/cli/)."""
