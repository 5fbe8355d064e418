"""docs/venue.md's Formats section: its double-elimination picture is the bracket the code builds."""

import pathlib

from battlement.venue.formats import Tournament

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "venue.md"


def picture(n: int = 8) -> str:
    """The flow of an n-team double-elimination bracket as Mermaid: winners solid, losers dotted."""
    t = Tournament("double_elimination", ["seed %d" % (i + 1) for i in range(n)])
    node = {m.id: m.id.replace("-", "_") for m in t.matches()}
    lines = ["```mermaid", "flowchart LR"]
    titles = {"winners": "winners' bracket", "losers": "losers' bracket", "grand_final": "grand final"}
    for bracket, title in titles.items():
        lines.append('  subgraph %s["%s"]' % (bracket, title))
        for m in t.matches():
            if m.bracket == bracket:
                seeded = [s for s in m.sources if s.startswith("seed")]
                label = m.id + ("<br/>%s v %s" % tuple(seeded) if len(seeded) == 2 else "")
                if m.id == "GF-2":
                    label += "<br/>only if the losers' side won GF-1"
                lines.append('    %s["%s"]' % (node[m.id], label))
        lines.append("  end")
    for m in t.matches():
        if m.id == "GF-2":
            lines.append("  GF_1 -. reset .-> GF_2")
            continue
        for s in m.sources:
            kind, _, src = s.partition(" of ")
            if src:
                lines.append("  %s %s %s" % (node[src], "-->" if kind == "winner" else "-.->", node[m.id]))
    lines.append("```")
    return "\n".join(lines)


def test_the_double_elimination_picture_is_the_bracket_the_code_builds():
    text = DOC.read_text()
    assert picture() in text, "docs/venue.md's 8-team bracket differs from the code; paste in picture():\n" + picture()


def test_the_doc_opens_with_the_formats_and_keeps_its_sections():
    heads = [line for line in DOC.read_text().splitlines() if line.startswith("## ")]
    assert heads[:4] == ["## Formats", "## Players and teams", "## The hub", "## The venue page"]
