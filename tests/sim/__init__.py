"""Tests of simulated boards (host/battlement/sim/)."""
