"""A SKILL.md's front matter and body, parsed without touching the disk."""

import pytest

from adapters.knowledge.skill_files import (
    DESCRIPTION_CAP,
    SkillFileError,
    skill_body,
    skill_header,
    split_front_matter,
)


def test_front_matter_names_and_describes_the_skill() -> None:
    text = "---\nname: Deploy\ndescription: Ships the stack.\n---\n\n# Steps\n1. plan\n"
    header = skill_header(text, "folder")
    assert (header.name, header.description) == ("deploy", "Ships the stack.")
    assert skill_body(text) == "# Steps\n1. plan"


def test_the_folder_names_a_skill_without_a_name() -> None:
    assert skill_header("---\ndescription: d\n---\nbody", "lint-fix").name == "lint-fix"


def test_windows_line_ends_a_byte_order_mark_and_trailing_blanks_on_the_fences() -> None:
    text = "\ufeff--- \r\nname: x\r\ndescription: y\r\n---\t\r\nbody\r\n"
    assert skill_header(text, "f").name == "x"
    assert skill_body(text) == "body"


def test_a_multi_line_description_becomes_one_line_and_a_long_one_is_cut() -> None:
    text = "---\ndescription: |\n  first\n  second\n---\n"
    assert skill_header(text, "f").description == "first second"
    long = skill_header(f"---\ndescription: {'a' * 5000}\n---\n", "f").description
    assert len(long) == DESCRIPTION_CAP and long.endswith("…")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("no front matter at all", "no front matter"),
        ("---\ndescription: never closed\n", "no front matter"),
        ("---\ndescription: [unclosed\n---\n", "not valid YAML"),
        ("---\n- a list\n---\n", "not a mapping"),
        ("---\nname: x\n---\n", "description is missing"),
        ("---\ndescription: '   '\n---\n", "description is missing"),
        ("---\ndescription: 3\n---\n", "description is missing"),
        ("---\nname: has space\ndescription: d\n---\n", "is not 1-64"),
        ("---\nname: -dash\ndescription: d\n---\n", "is not 1-64"),
        (f"---\nname: {'a' * 65}\ndescription: d\n---\n", "is not 1-64"),
        ("---\nname: [a]\ndescription: d\n---\n", "must be text"),
        ("---\n---\n", "description is missing"),
    ],
)
def test_a_skill_file_that_cannot_be_offered_says_why(text: str, reason: str) -> None:
    with pytest.raises(SkillFileError, match=reason):
        skill_header(text, "folder")


def test_a_bad_folder_name_is_refused_when_it_would_be_the_name() -> None:
    with pytest.raises(SkillFileError, match="is not 1-64"):
        skill_header("---\ndescription: d\n---\n", "My Skill")
    assert skill_header("---\ndescription: d\n---\n", "My_Skill").name == "my_skill"


def test_the_body_of_a_file_without_front_matter_is_all_of_it() -> None:
    assert skill_body("  just instructions\n") == "just instructions"
    assert split_front_matter("text\n---\nnot front matter\n---\n") == (
        None,
        "text\n---\nnot front matter\n---\n",
    )


def test_dashes_inside_the_body_stay_in_the_body() -> None:
    text = "---\ndescription: d\n---\nabove\n---\nbelow\n"
    assert skill_body(text) == "above\n---\nbelow"
    assert split_front_matter("---\n---\n") == ("", "")
