"""Medieval Pong: what a tower's two tilt switches mean to the rules (docs/hardware.md, "Roof sensing").

Each tower carries a fall switch (object <side>.<tower>.tilt) that closes once the tower leaves
upright, lying down or upside down alike, and a roof switch (<side>.<tower>.roof) that closes only
while the tower stands upside down, as the Architect's roof does. Together they read

    upright: both open    lying on its side: fall closed, roof open    upside down: both closed

so a roof in place is told from a roof that tipped: only the roof switch opening means a roof
tipped over (or was knocked off). Setting a roof closes both switches and means nothing; the fall
switch alone never tips a roof, since a tower knocked flat and a roof set in place both close it.

Pure; the table's sensor mapping uses it (it is no part of the rules a board loads).
"""

FALL = "tilt"  # the object suffix of the fall switch
ROOF = "roof"  # ... and of the roof switch


def switch_input(obj, closed):
    """The rules input one switch change means, or None: obj "<side>.<tower>.tilt|roof", closed its reading."""
    side, tower, switch = obj.split(".")
    if switch == ROOF and not closed:
        return {"t": "tilt", "side": side, "tower": tower}
    return None


def switch_of(inp):
    """The inverse, for the page's sensor buttons: (object, reading) that reports this tilt input."""
    return "%s.%s.%s" % (inp["side"], inp["tower"], ROOF), 0
