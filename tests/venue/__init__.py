"""Tests of the venue: the tournament formats (host/battlement/venue/formats/)."""
