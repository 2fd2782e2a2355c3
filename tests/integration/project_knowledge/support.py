"""Git repositories and instruction files the LocalProjectKnowledge tests build."""

import os
import subprocess
from pathlib import Path

from domain.knowledge import (
    InstructionFile,
    InstructionScope,
)

USER, PROJECT, DIRECTORY = (
    InstructionScope.USER,
    InstructionScope.PROJECT,
    InstructionScope.DIRECTORY,
)


def git(repo: Path, *args: str) -> str:
    # The machine's own git settings (a signing key, another default branch) stay out.
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    result = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return result.stdout


def init_repository(repo: Path) -> Path:
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "--quiet", "--initial-branch=main")
    git(repo, "config", "user.name", "Test")
    git(repo, "config", "user.email", "test@example.invalid")
    return repo.resolve()  # what git names its root


def commit_all(repo: Path, message: str = "work") -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", message)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def found(files: tuple[InstructionFile, ...]) -> list[tuple[str, InstructionScope]]:
    return [(file.path, file.scope) for file in files]
