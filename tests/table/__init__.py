"""Tests of the table: maps, router, session, journal, adapters (host/battlement/table/)."""
