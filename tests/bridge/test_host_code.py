"""The host code is kept in the journal as the side codes are: a restart keeps the open host page's code."""

import pytest
from battlement.bridge import Bridge
from battlement.table.maps import for_game


def host_code(journal, given=None):
    b = Bridge([for_game("ringo")], journal, simulate=True, host_code=given)
    try:
        return b.host_code
    finally:
        b.journal.close()


def test_the_same_journal_gives_the_same_host_code(tmp_path):
    j = str(tmp_path / "j.sqlite")
    first = host_code(j)
    assert first == host_code(j)
    assert host_code(str(tmp_path / "other.sqlite")) != first  # a new journal, a new code


@pytest.mark.parametrize("given", ["table-seven-host-code"])
def test_a_code_set_on_the_command_line_wins_and_the_kept_one_stays(tmp_path, given):
    j = str(tmp_path / "j.sqlite")
    kept = host_code(j)
    assert host_code(j, given) == given
    assert host_code(j) == kept
