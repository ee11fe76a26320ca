"""openenv.yaml has two copies that cannot be links (OpenEnv's validator and catalog refuse
symbolic links): envs/stocker/ (what `openenv catalog build` indexes) and the client
distribution's (what AutoEnv reads). They stay identical to the root's."""

from __future__ import annotations

from openenv_package_testing import ROOT

COPIES = ("envs/stocker/openenv.yaml", "clients/openenv-stocker/stocker/openenv.yaml")


def test_the_copies_of_openenv_yaml_are_the_root_one() -> None:
    root = (ROOT / "openenv.yaml").read_bytes()
    for copy in COPIES:
        path = ROOT / copy
        assert not path.is_symlink() and path.is_file(), copy
        assert path.read_bytes() == root, f"{copy} differs from openenv.yaml: cp openenv.yaml {copy}"
