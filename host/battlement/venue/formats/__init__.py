"""Tournament formats, pure and deterministic: round robin, single and double elimination, blind draw.

No I/O and no clock: a Tournament is a function of its setup and the results fed to it, in order.
"""

from battlement.venue.formats.bracket import MAX_TEAMS
from battlement.venue.formats.draw import blind_draw
from battlement.venue.formats.model import (
    AlreadyPlayed,
    BadResult,
    CorrectionRefused,
    Match,
    NotReady,
    Result,
    ResultRefused,
    SetupError,
    Standing,
    Team,
    UnknownMatch,
    VenueError,
)
from battlement.venue.formats.tournament import FORMATS, SEEDINGS, Tournament

__all__ = ["FORMATS", "MAX_TEAMS", "SEEDINGS", "AlreadyPlayed", "BadResult", "CorrectionRefused", "Match",
           "NotReady", "Result", "ResultRefused", "SetupError", "Standing", "Team", "Tournament",
           "UnknownMatch", "VenueError", "blind_draw"]
