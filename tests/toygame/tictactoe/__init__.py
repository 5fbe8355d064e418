# A toy sixth game that lives only under tests/: the proof that a game plugs into the host untouched.
