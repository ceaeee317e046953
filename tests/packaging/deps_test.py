#!/usr/bin/env python3
"""scripts/deps.sh in two sets: what building and running need (the README's first command)
and what the tests add (the README's test command and .ci/run). Installs nothing: --list."""
import re
import subprocess
import sys
import unittest

ROOT = sys.argv.pop(1) if len(sys.argv) > 1 else "."

# Packages only tests use: servers the tests start, the browser, checkers.
TEST_ONLY = ["postgresql-15", "prometheus", "prometheus-alertmanager", "chromium", "lintian",
             "python3-yaml", "zsh", "fish"]


def listed(*args):
    out = subprocess.run([f"{ROOT}/scripts/deps.sh", *args, "--list"], check=True,
                         capture_output=True, text=True).stdout
    return out.split()


def readme_commands():
    text = open(f"{ROOT}/README.md", encoding="utf-8").read()
    section = text.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)\n```", section, re.S)


class DepsTest(unittest.TestCase):
    def test_the_run_set_holds_no_test_server_browser_or_checker(self):
        run = listed()
        for p in TEST_ONLY:
            self.assertNotIn(p, run)
        for p in ["cmake", "ninja-build", "g++", "libre2-dev", "libsqlite3-dev", "libboost-dev",
                  "libpq-dev", "libgtest-dev"]:
            self.assertIn(p, run)

    def test_the_test_set_is_the_run_set_and_what_tests_add(self):
        run, tests = listed(), listed("--tests")
        self.assertEqual(tests[:len(run)], run)
        for p in TEST_ONLY:
            self.assertIn(p, tests)

    def test_an_unknown_option_is_refused(self):
        r = subprocess.run([f"{ROOT}/scripts/deps.sh", "--test"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown option", r.stderr)

    def test_the_readme_runs_the_run_set_then_the_test_set_and_ci_runs_the_second(self):
        commands = readme_commands()
        self.assertEqual(len(commands), 2)
        self.assertTrue(commands[0].startswith("scripts/deps.sh && "), commands[0])
        self.assertTrue(commands[1].startswith("scripts/deps.sh --tests && "), commands[1])
        ci = open(f"{ROOT}/.ci/run", encoding="utf-8").read().strip().splitlines()[-1]
        self.assertEqual(ci, commands[1])


if __name__ == "__main__":
    unittest.main()
