"""Sound: speech and tones for the table's cues, played one at a time, with a cache of spoken phrases."""
