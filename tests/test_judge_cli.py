"""``debatekit judge``: invite prints a personal link whose token is stored hashed, admin prints a
fresh experimenter link, the commands work on a PostgreSQL database as on a SQLite file, and every
user mistake is one line on stderr with exit status 2."""

from __future__ import annotations

import json
import socket
import sys

import pytest

from debatekit.cli.main import main
from debatekit.judge.store import Store, TaskKey, token_hash


def test_invite_and_admin_print_working_links(tmp_path, capsys) -> None:
    db = tmp_path / "judges.sqlite"
    assert main(["judge", "invite", "Ada Lovelace", "--db", str(db), "--url", "https://judges.example/"]) == 0
    link = capsys.readouterr().out.strip()
    assert link.startswith("https://judges.example/j/")
    token = link.rsplit("/", 1)[1]
    store = Store(db)
    assert store.judge(token).name == "Ada Lovelace"
    assert store._db().execute("SELECT token_hash FROM judges").fetchone()[0] == token_hash(token)
    assert main(["judge", "admin", "--db", str(db)]) == 0
    admin = capsys.readouterr().out.strip()
    assert admin.startswith("http://127.0.0.1:8000/admin/") and store.is_admin(admin.rsplit("/", 1)[1])


def test_judge_alone_prints_its_help(capsys) -> None:
    assert main(["judge"]) == 0
    out = capsys.readouterr().out
    assert "serve" in out and "invite" in out and "admin" in out


def mistakes(tmp_path) -> dict[str, tuple[list[str], str]]:
    (tmp_path / "junk.sqlite").write_text("not a database")
    (tmp_path / "empty.md").write_text("\n")
    (tmp_path / "gold.jsonl").write_text('{"question": "q", "answer": "yes"}\n')
    j = str(tmp_path / "j.sqlite")
    return {
        "missing instructions": (["serve", "--db", j, "--instructions", str(tmp_path / "no.md")], "no.md"),
        "empty consent": (["serve", "--db", j, "--consent", str(tmp_path / "empty.md")], "empty"),
        "gold answer not a bool": (["gold", str(tmp_path / "gold.jsonl"), "--db", j], "gold.jsonl:1: answer"),
        "quota 0": (["invite", "a", "--db", j, "--quota", "0"], "--quota"),
        "export no db": (["export", "--db", str(tmp_path / "none.sqlite")], "no such"),
        "export bad format": (["export", "--db", j, "--format", "xml"], "--format"),
        "no such folder": (["invite", "a", "--db", str(tmp_path / "missing" / "j.sqlite")], "does not exist"),
        "db is a folder": (["invite", "a", "--db", str(tmp_path)], "is a folder"),
        "not a database": (["admin", "--db", str(tmp_path / "junk.sqlite")], "not a database"),
        "empty name": (["invite", " ", "--db", str(tmp_path / "j.sqlite")], "needs a name"),
        "bad url": (["admin", "--db", str(tmp_path / "j.sqlite"), "--url", "judges.example"], "http://"),
        "bad port": (["serve", "--db", str(tmp_path / "j.sqlite"), "--port", "70000"], "--port"),
        "unknown option": (["invite", "a", "--db", str(tmp_path / "j.sqlite"), "--colour"], "--colour"),
    }


CASES = ["no such folder", "db is a folder", "not a database", "empty name", "bad url", "bad port", "unknown option",
         "missing instructions", "empty consent", "gold answer not a bool", "quota 0", "export no db",
         "export bad format"]  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_a_user_mistake_is_one_line_and_status_2(tmp_path, capsys, case) -> None:
    if case in ("missing instructions", "empty consent"):  # read by the server, after its extra is found
        pytest.importorskip("uvicorn")
        pytest.importorskip("markdown_it")
    argv, says = mistakes(tmp_path)[case]
    assert main(["judge", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("debatekit: error: ") and says in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_serve_on_a_port_in_use_is_a_user_mistake(tmp_path, capsys) -> None:
    pytest.importorskip("uvicorn")
    pytest.importorskip("fastapi")
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        assert main(["judge", "serve", "--db", str(tmp_path / "j.sqlite"), "--port", str(port)]) == 2
    assert "cannot listen on 127.0.0.1" in capsys.readouterr().err


def test_serve_without_the_extra_says_how_to_install_it(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # import uvicorn now raises ImportError
    assert main(["judge", "serve", "--db", str(tmp_path / "j.sqlite")]) == 2
    err = capsys.readouterr().err
    assert "pip install 'debatekit[judge]'" in err and "uvicorn" in err


def test_the_commands_work_on_a_postgresql_database(postgres_url, capsys) -> None:
    assert main(["judge", "invite", "Ada", "--db", postgres_url]) == 0
    token = capsys.readouterr().out.strip().rsplit("/", 1)[1]
    store = Store(postgres_url)
    assert store.judge(token).name == "Ada"
    store.task_for(TaskKey("run-p", 0, "verifier", 0), "Is step 3 right?", ("x1 = 1",), 2, 1)
    assert main(["judge", "tasks", "--db", postgres_url, "--json"]) == 0
    (task,) = json.loads(capsys.readouterr().out)["tasks"]
    assert (task["run"], task["needed"], task["given"]) == ("run-p", 2, 0)
    assert main(["judge", "close", str(task["id"]), "--db", postgres_url]) == 0
    assert store.task(task["id"]).closed is not None and "closed 1 open task" in capsys.readouterr().out


def test_an_unreachable_postgresql_server_is_one_line_without_the_password(capsys) -> None:
    pytest.importorskip("psycopg")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once closed
    assert main(["judge", "invite", "a", "--db", f"postgresql://ann:s3cret@127.0.0.1:{port}/judges"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("debatekit: error: cannot open the judges' database postgresql://ann:***@127.0.0.1:")
    assert len(err.strip().splitlines()) == 1 and "s3cret" not in err
