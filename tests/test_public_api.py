"""The public API: everything in __all__ imports, and importing the package stays cheap."""

import subprocess
import sys

import eval_skills


def test_every_public_name_resolves():
    for name in eval_skills.__all__:
        assert getattr(eval_skills, name) is not None, name


def test_public_names_are_the_defining_objects():
    from eval_skills.errors import InputError
    from eval_skills.tool_skills.evaluation import evaluate

    assert eval_skills.InputError is InputError
    assert eval_skills.evaluate is evaluate


def test_import_and_version_do_not_load_heavy_dependencies():
    code = ("import sys, eval_skills.cli; "
            "heavy = [m for m in ('pydantic', 'httpx', 'jsonschema', 'rich', 'jinja2', 'yaml', 'sqlite3') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
