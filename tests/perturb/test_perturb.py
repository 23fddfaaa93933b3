"""Perturbations: identity at 0, determinism, monotone effect, no invented values, errors."""

from __future__ import annotations

import math
import re
import string
from collections.abc import Callable

import numpy as np
import pytest
from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from sim2human.errors import UsageError
from sim2human.perturb import PERTURBATIONS, PRESETS, Perturbation, compose, perturb, validate_mix
from sim2human.perturb._words import is_value, say_digits, say_ordinal, say_year
from sim2human.perturb.asr import CONFUSIONS
from sim2human.perturb.discourse import OFF_TARGET, TANGENTS

CORPUS = (
    "I've had chest pain for 3 days.",
    "It started about fifteen days ago, maybe a bit more.",
    "I'd say it's a 7 out of 10, worse at night.",
    "I take metformin every morning and lisinopril at night.",
    "I'm allergic to penicillin, it gives me a rash.",
    "I have asthma and diabetes, both since I was young.",
    "No, no chest pain at all.",
    "Yes, I do get short of breath when I climb the stairs.",
    "My date of birth is March 4, 1960.",
    "I was born on the 21st of June 1985.",
    "The headache is sharp and it's getting worse every day.",
    "I don't take any medications and I have no allergies that I know of.",
)
NAMES = tuple(PERTURBATIONS)


def fuzz_texts(n: int = 60) -> list[str]:
    """Arbitrary strings: empty, whitespace, punctuation, digits, non-ASCII, mixed case."""
    rng = np.random.default_rng(1234)
    alphabet = string.printable + "éñüßøçÉ日本語—…  \t\n"
    out = ["", " ", "\n", "...", "I", "7", "1960", "no"]
    for _ in range(n):
        k = int(rng.integers(0, 80))
        out.append("".join(alphabet[int(i)] for i in rng.integers(0, len(alphabet), size=k)))
    return out + list(CORPUS)


def cer(a: str, b: str) -> float:
    return float(Levenshtein.distance(a, b)) / max(1, len(a))


def dropped_share(a: str, b: str) -> float:
    """Silence: share of the original that is gone (the output is a prefix plus ``...``)."""
    core = b.removesuffix("...")
    assert a.startswith(core), (a, b)
    return 1.0 - len(core) / max(1, len(a))


EFFECT: dict[str, Callable[[str, str], float]] = {name: cer for name in NAMES}
EFFECT["silence"] = dropped_share


# --- the table -----------------------------------------------------------------------------------


def test_table_names_and_descriptions() -> None:
    assert set(NAMES) == {
        "typos",
        "asr",
        "disfluency",
        "silence",
        "misunderstanding",
        "tangents",
        "codeswitch",
    }
    for name, p in PERTURBATIONS.items():
        assert isinstance(p, Perturbation)
        assert p.name == name
        assert p.description and "\n" not in p.description and len(p.description) <= 100
    with pytest.raises(TypeError):
        PERTURBATIONS["x"] = PERTURBATIONS["typos"]  # type: ignore[index]


def test_presets_are_valid_mixes() -> None:
    assert "noisy-line" in PRESETS and PRESETS["clean"] == {}
    for mix in PRESETS.values():
        assert validate_mix(mix) == {name: float(sev) for name, sev in mix.items()}
    rng = np.random.default_rng(0)
    assert all(compose(t, PRESETS["clean"], rng) == t for t in CORPUS)


# --- identity, determinism -----------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_severity_zero_is_identity(name: str) -> None:
    rng = np.random.default_rng(5)
    for text in fuzz_texts():
        assert perturb(text, name, 0.0, rng) == text
        assert perturb(text, name, 0, rng) == text


@pytest.mark.parametrize("name", NAMES)
def test_any_text_any_severity_is_safe(name: str) -> None:
    """Arbitrary input never crashes and returns a string, at every severity."""
    rng = np.random.default_rng(6)
    for text in fuzz_texts():
        for severity in (0.01, 0.5, 1.0):
            assert isinstance(perturb(text, name, severity, rng), str)


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_output(name: str) -> None:
    for severity in (0.3, 0.7, 1.0):
        a = [perturb(t, name, severity, np.random.default_rng(11)) for t in CORPUS]
        b = [perturb(t, name, severity, np.random.default_rng(11)) for t in CORPUS]
        assert a == b
        rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
        assert [perturb(t, name, severity, rng_a) for t in CORPUS] == [
            perturb(t, name, severity, rng_b) for t in CORPUS
        ]


@pytest.mark.parametrize("name", NAMES)
def test_seed_matters(name: str) -> None:
    text = CORPUS[3]
    outs = {perturb(text, name, 0.8, np.random.default_rng(seed)) for seed in range(20)}
    assert len(outs) > 1


# --- effect grows with severity ------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_mean_effect_grows_with_severity(name: str) -> None:
    rng = np.random.default_rng(2024)
    means = []
    for severity in (0.2, 0.5, 0.9):
        effects = [
            EFFECT[name](t, perturb(t, name, severity, rng)) for _ in range(17) for t in CORPUS
        ]  # 204 samples per severity
        means.append(float(np.mean(effects)))
    assert 0.0 < means[0] < means[1] < means[2], means


# --- no invented values --------------------------------------------------------------------------

FIELD_WORDS = {
    "metformin",
    "lisinopril",
    "insulin",
    "aspirin",
    "ibuprofen",
    "penicillin",
    "latex",
    "peanuts",
    "asthma",
    "diabetes",
    "hypertension",
    "march",
    "june",
    "may",
    "yes",
    "no",
    "yeah",
    "nope",
}
NUMBER_RE = re.compile(
    r"\d+|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen"
    r"|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy"
    r"|eighty|ninety|first|second|third|fourth|fifth|hundred|thousand)\b"
)


def field_values(text: str) -> set[str]:
    low = text.lower()
    return {w for w in re.findall(r"[a-z]+", low) if w in FIELD_WORDS} | {
        m.group(0) for m in NUMBER_RE.finditer(low)
    }


@pytest.mark.parametrize("name", NAMES)
def test_no_invented_field_values(name: str) -> None:
    rng = np.random.default_rng(77)
    for _ in range(15):
        for text in CORPUS:
            before = field_values(text)
            after = field_values(perturb(text, name, 1.0, rng))
            new = after - before
            if name == "asr":
                # digits are spoken out and teens/tens misheard: numbers may change, but only
                # where the user said a number; no medicine, month or yes/no appears
                assert not (new - {m.group(0) for m in NUMBER_RE.finditer(" ".join(new))})
                if new:
                    assert NUMBER_RE.search(text.lower()), (text, new)
            else:
                assert not new, (name, text, new)


def test_inserted_sentences_carry_no_values() -> None:
    for sentence in (*OFF_TARGET, *TANGENTS):
        assert not any(is_value(w) for w in re.findall(r"[\w']+", sentence)), sentence
        assert not field_values(sentence), sentence


def test_asr_table_never_turns_a_word_into_a_value() -> None:
    for src, outs in CONFUSIONS.items():
        for out in outs:
            assert out != src
            assert not is_value(out) or is_value(src), (src, out)


# --- behaviour of each perturbation --------------------------------------------------------------


def test_spoken_numbers() -> None:
    assert say_year(1960) == "nineteen sixty"
    assert say_year(1905) == "nineteen oh five"
    assert say_year(2005) == "two thousand five"
    assert say_year(2019) == "twenty nineteen"
    assert say_ordinal(4) == "fourth" and say_ordinal(21) == "twenty first"
    assert say_ordinal(30) == "thirtieth"
    assert say_digits("15") == "fifteen" and say_digits("42") == "forty two"
    assert say_digits("4th") == "fourth" and say_digits("123456") is None


def test_asr_mishears_numbers_like_a_recogniser() -> None:
    outs = {perturb("born in 1960", "asr", 1.0, np.random.default_rng(s)) for s in range(60)}
    assert any("nineteen sixty" in o for o in outs)
    assert any("nineteen sixteen" in o or "ninety sixty" in o for o in outs)
    outs = {perturb("for fifteen days", "asr", 1.0, np.random.default_rng(s)) for s in range(60)}
    assert any("fifty" in o for o in outs)


def test_typos_leave_digits_alone() -> None:
    rng = np.random.default_rng(8)
    for text in CORPUS:
        out = perturb(text, "typos", 1.0, rng)
        assert re.findall(r"\d+", out) == re.findall(r"\d+", text)


def test_disfluency_only_inserts() -> None:
    rng = np.random.default_rng(9)
    for text in CORPUS:
        out = perturb(text, "disfluency", 1.0, rng).split()
        it = iter(out)
        assert all(word in it for word in text.split()), out  # original words, in order


def test_silence_at_full_severity_is_silent() -> None:
    rng = np.random.default_rng(10)
    outs = {perturb(t, "silence", 1.0, rng) for t in CORPUS * 5}
    assert outs == {"", "..."}


def test_misunderstanding_and_tangents() -> None:
    rng = np.random.default_rng(12)
    for text in CORPUS:
        assert perturb(text, "misunderstanding", 1.0, rng) in OFF_TARGET
        out = perturb(text, "tangents", 1.0, rng)
        assert text in out and out != text


def test_codeswitch_full() -> None:
    out = perturb("My chest pain and my head.", "codeswitch", 1.0, np.random.default_rng(0))
    assert out == "Mi pecho dolor y mi cabeza."


# --- compose -------------------------------------------------------------------------------------


def test_compose_deterministic_and_order_independent_of_mix_order() -> None:
    mix = {"typos": 0.4, "asr": 0.5, "disfluency": 0.5, "tangents": 0.5}
    reverse = dict(reversed(mix.items()))
    for seed in range(10):
        a = [compose(t, mix, np.random.default_rng(seed)) for t in CORPUS]
        b = [compose(t, reverse, np.random.default_rng(seed)) for t in CORPUS]
        assert a == b


def test_compose_gives_each_perturbation_its_own_stream() -> None:
    """Adding or zeroing other perturbations does not change what one of them draws."""
    for seed in range(10):
        for text in CORPUS:
            alone = compose(text, {"asr": 0.7}, np.random.default_rng(seed))
            with_zeros = compose(text, {"asr": 0.7, "typos": 0.0}, np.random.default_rng(seed))
            with_later = compose(text, {"asr": 0.7, "tangents": 0.0}, np.random.default_rng(seed))
            assert alone == with_zeros == with_later


def test_compose_applies_canonical_order() -> None:
    # silence comes after tangents: however many stories are told, the turn is lost
    for seed in range(20):
        out = compose(CORPUS[0], {"silence": 1.0, "tangents": 1.0}, np.random.default_rng(seed))
        assert out in {"", "..."}
    # typos come after misunderstanding: the off-target reply itself is mistyped
    outs = [
        compose(CORPUS[0], {"typos": 1.0, "misunderstanding": 1.0}, np.random.default_rng(s))
        for s in range(20)
    ]
    assert any(o not in OFF_TARGET for o in outs)
    assert all(max(fuzz.ratio(o, r) for r in OFF_TARGET) > 70 for o in outs)


def test_validate_mix_returns_canonical_order() -> None:
    assert list(validate_mix({"typos": 1, "misunderstanding": 0.5, "asr": 0.2})) == [
        "misunderstanding",
        "asr",
        "typos",
    ]


# --- errors --------------------------------------------------------------------------------------


def test_validate_mix_unknown_name() -> None:
    with pytest.raises(UsageError, match=r"'typo'.*did you mean 'typos'"):
        validate_mix({"typo": 0.5})
    with pytest.raises(UsageError, match="'laughter'"):
        compose("hi", {"laughter": 0.5}, np.random.default_rng(0))
    with pytest.raises(UsageError, match="'nope'"):
        perturb("hi", "nope", 0.5, np.random.default_rng(0))


@pytest.mark.parametrize("bad", [1.5, -0.1, math.nan, math.inf, True, "0.5", None])
def test_validate_mix_bad_severity(bad: object) -> None:
    with pytest.raises(UsageError, match=r"'asr'.*\[0, 1\]"):
        validate_mix({"typos": 0.2, "asr": bad})  # type: ignore[dict-item]
    with pytest.raises(UsageError, match="'silence'"):
        perturb("hi", "silence", bad, np.random.default_rng(0))  # type: ignore[arg-type]


def test_validate_mix_normalises() -> None:
    assert validate_mix({"typos": 1, "asr": np.float64(0.25)}) == {"asr": 0.25, "typos": 1.0}
    assert validate_mix({}) == {}
    with pytest.raises(UsageError, match="mapping"):
        validate_mix([("typos", 0.5)])  # type: ignore[arg-type]


def test_noise_stream_is_seeded_and_keeps_perturbations_independent() -> None:
    from sim2human.perturb import NoiseStream

    text = "I take metformin and I was born on March 4, 1960, um, yes"
    a = NoiseStream({"typos": 0.6, "disfluency": 0.6}, np.random.default_rng(3))
    b = NoiseStream({"typos": 0.6, "disfluency": 0.6}, np.random.default_rng(3))
    assert [a(text) for _ in range(5)] == [b(text) for _ in range(5)]
    clean = NoiseStream({"typos": 0.0}, np.random.default_rng(3))
    assert clean(text) == text
    # turning one perturbation off leaves the other's draws unchanged
    only = NoiseStream({"disfluency": 0.6}, np.random.default_rng(3))
    both = NoiseStream({"disfluency": 0.6, "silence": 0.0}, np.random.default_rng(3))
    assert [only(text) for _ in range(3)] == [both(text) for _ in range(3)]
