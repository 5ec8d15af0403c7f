"""torch 2.13's public surface against lucid's: every public name of the namespaces training
code uses, and every keyword each of torch's callables there takes, is in lucid, or listed
with its reason in ``tests/torch_surface_exclusions.py`` (excluded on purpose, or still to
build; that list only shrinks). ``python tests/torch_surface.py`` prints the counts and the
gaps."""

from __future__ import annotations

import fnmatch
import functools
from typing import Any

import pytest
from torch_surface_exclusions import EXCLUDED, KEYWORDS_EXCLUDED, KEYWORDS_TO_BUILD, TO_BUILD

pytest.importorskip("torch")
import torch_surface  # noqa: E402  (reads torch's surface: only where torch is installed)

pytestmark = pytest.mark.filterwarnings("ignore")


@functools.lru_cache(maxsize=1)
def _report() -> Any:
    return torch_surface.survey()


def test_every_torch_name_is_in_lucid_or_listed(torch: Any) -> None:
    r = _report()
    assert not r.missing, "torch names lucid lacks, neither excluded nor listed to build:\n" \
        + "\n".join(r.missing)


def test_every_torch_keyword_is_taken_or_listed(torch: Any) -> None:
    r = _report()
    assert r.keywords_checked > 900
    assert not r.keyword_gaps, "keywords torch takes and lucid does not:\n" \
        + "\n".join(r.keyword_gaps)


def test_the_to_build_lists_hold_only_what_lucid_lacks(torch: Any) -> None:
    r = _report()
    done = r.built_but_listed + r.keywords_built_but_listed
    assert not done, "built now: take these off the lists in torch_surface_exclusions.py:\n" \
        + "\n".join(done)
    stale = sorted(set(TO_BUILD) - set(r.names))
    assert not stale, f"not torch 2.13 names: {stale}"


def test_every_exclusion_pattern_names_something(torch: Any) -> None:
    r = _report()
    for cat in EXCLUDED:
        for pat in cat["names"]:
            assert fnmatch.filter(r.names, pat), f"{cat['category']}: {pat} matches nothing"
    for cat in KEYWORDS_EXCLUDED:
        for pat in cat["keywords"]:
            assert fnmatch.filter(r.keywords, pat), f"{cat['category']}: {pat} matches nothing"


def test_the_exclusion_file_gives_every_category_a_reason() -> None:
    for cat in EXCLUDED + KEYWORDS_EXCLUDED:
        assert len(cat["reason"]) > 40, cat["category"]
        assert cat.get("names") or cat.get("keywords"), cat["category"]
    assert all("(" not in n for n in TO_BUILD)
    assert all(isinstance(v, tuple) and v for v in KEYWORDS_TO_BUILD.values())
