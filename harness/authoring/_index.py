"""What the package index says about a draft's blamed project: no such project, another project of that name, a
stated release it lacks, or a fix a reply names; each turns release pins into commit pins of the report's repository
(or, for a package that repository does not build, of its own).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from harness.authoring._bugreport import BugReport
from harness.authoring._envstated import EGG_FOLDER
from harness.authoring._owners import _checkout_frame, names_checkout, renamed_index_pins
from harness.cases._placeholders import MARK

# Whether a distribution has any release on the package index: True, False (the index says no such project) or
# None (not asked, or no answer). `new` asks the configured index; tests give a table.
Released = Callable[[str], "bool | None"]
# The URLs the package index's metadata gives for a project (home page, project URLs); None: not known (offline).
ProjectUrls = Callable[[str], "tuple[str, ...] | None"]
# The releases the package index has of a project; None: not known (not asked, offline, no answer in time).
IndexVersions = Callable[[str], "tuple[str, ...] | None"]


def _own_repository(url: str, culprit: str) -> str:
    """The issue's repository ("NVIDIA/apex") when it is the blamed project's own (or its package of a later
    generation: nnUNet's nnunetv2), else ""."""
    repo = re.match(r"https?://github\.com/(?P<repo>[\w.-]+/(?P<name>[\w.-]+))", url)
    return repo["repo"] if repo and names_checkout(repo["name"], culprit) else ""


def _other_owner(culprit: str, repo: str, urls: tuple[str, ...] | None, notes: list[str]) -> str:
    """The index's project page when the index's project of that name is not the repository's (PyPI's ``apex`` is
    not NVIDIA's): its URLs name a code host but not the repository, do not name the repository's owner, or there
    are none (PyPI's ``brats`` links nowhere: a name match alone never wins over the report's repository), unless
    the repository's owner is named after the project. A sibling repository of the same owner, or a site named after
    the project with no code host naming another repository, is the project's own page (kraken.re)."""
    if urls is None:
        notes.append(f"not checked that the package index's {culprit} is {repo}'s project (its metadata did not "
                     "answer): if it is another project's, pin commits of the repository instead")
        return ""
    squeezed = [re.sub(r"[^a-z0-9]", "", url.lower()) for url in urls]
    owner = re.sub(r"[^a-z0-9]", "", repo.partition("/")[0].lower())
    if not urls and len(owner) >= 4 and owner in re.sub(r"[^a-z0-9]", "", culprit):
        notes.append(f"the package index's {culprit} links no repository; taken as {repo}'s, whose owner is named "
                     "after it (check it is)")
        return ""  # an organisation named after its project (pyannote/pyannote-audio) publishing its own package
    if not urls:  # a name match with no link at all: nothing ties it to the repository the report names
        return _NO_LINK
    if any(f"/{repo.lower()}" in url.lower().removesuffix(".git") for url in urls):
        return ""
    hosts = [host for url in urls if (host := re.match(r"https?://(?:www\.)?(?P<host>[^/:]+)(?:/(?P<owner>[^/]+))?",
                                                      url))]
    hosted = [host for host in hosts if host["host"] in _CODE_HOSTS]
    if _own_page(culprit, repo, hosts, hosted):
        notes.append(f"the package index's {culprit} links {urls[0]}, taken as {repo}'s own page (a repository of "
                     "the same owner, or a site named after the project): check it is")
        return ""
    return urls[0] if hosted or not any(owner in url for url in squeezed) else ""


_CODE_HOSTS = frozenset({"github.com", "gitlab.com", "bitbucket.org"})


def _own_page(culprit: str, repo: str, hosts: list[re.Match[str]], hosted: list[re.Match[str]]) -> bool:
    """A sibling repository of the same owner (unslothai/unsloth for unsloth-zoo), or, with no code host naming
    another repository, a site named after the project (kraken.re for kraken, secml-torch.readthedocs.io)."""
    if any(host["owner"] and host["owner"].lower() == repo.partition("/")[0].lower() for host in hosted):
        return True
    squeezed = re.sub(r"[^a-z0-9]", "", culprit)
    return not hosted and any(squeezed in {re.sub(r"[^a-z0-9]", "", label) for label in
                                           host["host"].lower().split(".")[:-1]} for host in hosts)


_NO_LINK = "its metadata links no repository"


def _used_as_library(report: BugReport, culprit: str, repo: str, notes: list[str]) -> bool:
    """An index project linking nowhere, named as the repository is (skorch-dev/skorch's skorch), that the report's
    code imports with nothing of a checkout (no script of the repository run, no frame of a checkout, no version field
    saying "git", not a pull request): the report used the released library, so its releases stay (a name match with
    no link is unknown, not another project's)."""
    if canonicalize_name(repo.partition("/")[2]) != canonicalize_name(culprit) or "/pull/" in report.url \
            or canonicalize_name(culprit) not in {canonicalize_name(module) for module in report.modules} \
            or report.script or report.environment.from_source or _checkout_run(report, culprit):
        return False
    notes.append(f"the package index's {culprit} links no repository; taken as {repo}'s, whose name it is and whose "
                 "modules the report's code imports (check it is: if not, pin commits of the repository instead)")
    return True


def _unreleased(culprit: str, report: BugReport, buggy: list[tuple[str, str]], notes: list[str],
                other: str = "") -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """A project the index does not have, whose name there is another project's (``other``: that project's page),
    or that the report ran from a checkout (``other`` is ``_CHECKOUT``): the report ran its repository's code, so both
    variants pin commits, the buggy one the commit the report states, if it states one."""
    source = _commit_source(report.url)
    absent = (f"the package index's {culprit} links no repository, so nothing ties it to the report's (it may be "
              "this project's: then pin its releases instead)" if other == _NO_LINK else
              f"the report ran {culprit} from a checkout of its repository ({other[len(_CHECKOUT):]})"
              if other.startswith(_CHECKOUT) else
              f"the package index's {culprit} is another project ({other})" if other else
              f"the package index has no project named {culprit}")
    notes.append(f"{absent}: the report ran its repository's code, so the "
                 f"variants pin commits ({culprit} @ {source}@COMMIT), or copy the code the repro needs into the case "
                 "folder beside the repro")
    missing = (f"{culprit} ran from a checkout" if other.startswith(_CHECKOUT) else
               f"{culprit}'s project is not on the package index" if other else
               f"{culprit} has no release on the package index")
    if commit := _run_commit(report):
        notes.append(f"the buggy pin is the commit the report states it ran ({commit}): check it")
        stated = (f"{culprit} @ {source}@{commit}", "the commit the report states it ran")
    named = f" ({_NAMED.format(culprit=culprit)})"
    ran = (f'{MARK}: {missing}: pin the commit the report ran, e.g. "{culprit} @ {source}@<commit>"{named}', "")
    pin = [(stated if commit else ran) if dist.startswith(MARK) and culprit in dist else (dist, why)
           for dist, why in buggy]
    fix = [(f'{MARK}: the commit that fixed it, e.g. "{culprit} @ {source}@<commit>"{named}', "")]
    return pin, fix


_SITE_PACKAGE = re.compile(r"-packages/(?P<name>[A-Za-z_][\w.-]*)/")


def _builds_another(report: BugReport, culprit: str) -> str:
    """The package the report's repository builds when it is not the culprit: another package of the frames or the
    listing named as the repository (gt4sd for GT4SD/gt4sd-core, whose frames call into paccmann_chemistry), else "".
    """
    repo = re.match(r"https?://github\.com/[\w.-]+/(?P<name>[\w.-]+)", report.url)
    if not repo:
        return ""
    checkout = canonicalize_name(repo["name"])
    framed = [match["name"] for frame in report.traceback.frames if (match := _SITE_PACKAGE.search(frame.posix))]
    for name in (*framed, *report.environment.pins):
        package = canonicalize_name(name)
        if package != canonicalize_name(culprit) and (names_checkout(repo["name"], name)
                                                     or checkout in {f"{package}-{part}" for part in _PART}):
            return str(package)
    return ""


# The parts a repository's name adds to the package it builds (gt4sd-core builds gt4sd); not any suffix: a
# dependency's name starts many repositories' (transformers-bloom-inference builds no transformers).
_PART = ("core", "lib", "src", "main", "python", "py", "pytorch", "official", "project", "repo", "dev")


def _elsewhere(culprit: str, url: str, other: str, buggy: list[tuple[str, str]],
               notes: list[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """A culprit the index does not have, filed at a repository that builds another package: the report's repository
    holds none of the culprit's code, so neither a release nor a commit of it can be pinned from here."""
    repo = url.split("github.com/", 1)[1].split("/issues")[0].split("/pull")[0]
    notes.append(f"the package index has no project named {culprit}, and the report's repository ({repo}) builds "
                 f"{other}: pin a commit of {culprit}'s own repository (of {repo} only if it builds {culprit} too, "
                 "under the name its packaging gives), or copy the code the repro needs into the case folder beside "
                 "the repro")
    where = (f"{culprit} has no release on the package index and {repo} builds {other}: pin the commit of "
             f"{culprit}'s own repository that the report ran (of {repo} only if it builds {culprit} too)")
    example = f'"{culprit} @ git+https://github.com/<owner>/<repo>@<commit>"'
    pin = [(f"{MARK}: {where}, e.g. {example}", "") if dist.startswith(MARK) and culprit in dist
           else (dist, why) for dist, why in buggy]
    return pin, [(f"{MARK}: the commit of {culprit}'s own repository that fixed it, e.g. {example}", "")]


# Whether the repository's package is named as its repository is not known here (no index project ties them):
# pip refuses a direct reference whose name is not the one the commit's packaging gives.
_NAMED = ("{culprit} if its pyproject.toml or setup.py names the project so, else that name: pip refuses a "
          "commit pin under another name")


_CHECKOUT = "checkout:"


def _run_commit(report: BugReport) -> str:
    """The commit the report states it ran, when its repository is the report's own (or the text names none)."""
    repo, sha = report.environment.commit
    own = re.match(r"https?://github\.com/([\w.-]+/([\w.-]+))", report.url)
    if own and repo.startswith("/"):  # an installed egg's name: the repository's when it is spelled the same
        return sha if canonicalize_name(repo[1:]) == canonicalize_name(own[2]) else ""
    return sha if own and (not repo or repo.lower() == own[1].lower()) else ""


def _cloned(report: BugReport, culprit: str) -> str:
    """How the report installed its own repository's current code ("installed from a clone ..."), else ""."""
    source = report.environment.installed_from
    own = _own_repository(report.url, culprit)
    return f"installed from its default branch, {source}" if source and source.lower() == own.lower() else ""


def _checkout_run(report: BugReport, culprit: str) -> str:
    """The path of the innermost frame of the culprit's code outside any site-packages (``/home/me/pnia/py4cast/
    metrics.py``): the report ran a source checkout of its repository, at a commit no release need hold."""
    frames = report.traceback.final_frames or report.traceback.frames
    local = tuple(frame for frame in frames if "-packages/" not in frame.posix and frame.posix.startswith("/"))
    if frame := _checkout_frame(local, culprit):
        return frame.path
    # a script run from the checkout's root (``File "metrics.py"``), no frame installed and no folder of the project's
    # package on its path (``opacus/utils/x.py`` is a package a release may hold): only a commit has that code
    relative = frames and not re.match(r"(?:[/~<\\]|[A-Za-z]:)", frames[-1].path) \
        and _checkout_frame(frames[-1:], culprit) is None
    return frames[-1].path if relative and not any("-packages/" in frame.posix for frame in frames) else ""


def _ran_source(report: BugReport, culprit: str) -> str:
    """The script the report says it ran ("when running test_all.py") with no frame of the culprit installed and no
    listed release of the culprit: the run was a checkout, so a later index project of another name (a repackaging
    of the repository) says nothing of the code that ran. "" when it may have installed one."""
    frames = report.traceback.final_frames or report.traceback.frames
    installed = f"-packages/{culprit.replace('-', '_')}/"
    if culprit in report.environment.pins or any(installed in frame.posix.lower() for frame in frames):
        return ""
    return report.script or next((name for name in report.subjects if name.endswith(".py")), "")


def _index_pins(report: BugReport, culprit: str, buggy: list[tuple[str, str]], fix: list[tuple[str, str]],
                notes: list[str], index: tuple[Released | None, ProjectUrls | None, IndexVersions | None],
                ) -> tuple[list[tuple[str, str]], list[tuple[str, str]], str]:
    """The culprit's pins after what the package index says: no such project, another project of that name, or no
    such release (each: commit pins of the report's repository); and the name they pin it under (the index's name of
    the repository's package, where it differs: neural_prophet's neuralprophet), which the draft blames."""
    released, project_urls, versions = index
    if culprit == "torch":
        return buggy, fix, culprit
    if culprit not in report.environment.pins and released and released(culprit) is False:
        if project_urls and (repo := _own_repository(report.url, culprit)) and not _ran_source(report, culprit) and \
                (renamed := renamed_index_pins(culprit, repo, project_urls, (buggy, fix), notes, True,
                                                      released)):
            return renamed  # the repository's package is on the index under another name (neural_prophet's)
        if not _own_repository(report.url, culprit) and (other := _builds_another(report, culprit)):
            return (*_elsewhere(culprit, report.url, other, buggy, notes), culprit)
        return (*_unreleased(culprit, report, buggy, notes), culprit)
    if culprit not in report.environment.pins and project_urls and (repo := _own_repository(report.url, culprit)) \
            and (owner := _other_owner(culprit, repo, project_urls(culprit), notes)) \
            and not (owner == _NO_LINK and _used_as_library(report, culprit, repo, notes)):
        if not _ran_source(report, culprit) and \
                (renamed := renamed_index_pins(culprit, repo, project_urls, (buggy, fix), notes, False, released)):
            return renamed  # the repository's package is on the index under another name
        return (*_unreleased(culprit, report, buggy, notes, owner), culprit)
    if project_urls and (egg := _egg_release(report, culprit)) and (built := _egg_built(report, culprit, buggy, egg,
                                                                                      project_urls(culprit), notes)):
        return (*built, culprit)
    # a pull request's checkout is its author's branch: the bug is in the released code the PR changes; a release the
    # prose states ("the latest release (0.8.0)") is the code the checkout held
    if culprit not in report.environment.pins and _own_repository(report.url, culprit) and "/pull/" not in report.url \
            and not _stated_version(culprit, buggy) and (checkout := _checkout_run(report, culprit)
                                                          or _cloned(report, culprit)):
        return (*_unreleased(culprit, report, buggy, notes, _CHECKOUT + checkout), culprit)
    if (stated := _stated_version(culprit, buggy)) and versions is not None:
        return (*_release_on_index(culprit, stated, versions(culprit), report.url, buggy, fix, notes), culprit)
    return buggy, fix, culprit


def _egg_release(report: BugReport, culprit: str) -> str:
    pin = report.environment.pins.get(culprit)
    return pin.version if pin and pin.source == EGG_FOLDER else ""


def _egg_built(report: BugReport, culprit: str, buggy: list[tuple[str, str]], egg: str,
               urls: tuple[str, ...] | None, notes: list[str],
               ) -> tuple[list[tuple[str, str]], list[tuple[str, str]]] | None:
    """An egg's release of the report's repository (``seq2seq-0.1.4-py3.6.egg`` for IBM/pytorch-seq2seq) whose name
    the index gives another project: a build of the repository's code (``python setup.py install``), so its pins are
    commits, the buggy one at that release's state. An index project that links nowhere is taken as the egg's."""
    repo = re.match(r"https?://github\.com/(?P<repo>[\w.-]+/(?P<name>[\w.-]+))", report.url)
    name = canonicalize_name(repo["name"]) if repo else ""
    if not repo or not (name == culprit or name.endswith(f"-{culprit}") or name.startswith(f"{culprit}-")) or not urls:
        return None
    owner = _other_owner(culprit, repo["repo"], urls, notes)
    if not owner:
        return None
    marked = [(f"{MARK}: {culprit} {egg}", why) if dist == f"{culprit}=={egg}" else (dist, why) for dist, why in buggy]
    pin, fixed = _unreleased(culprit, report, marked, notes, owner)
    return [(f"{dist} (the run's egg names release {egg}: the commit of its {egg} state)"
             if dist.startswith(MARK) and "pin the commit the report ran" in dist else dist, why)
            for dist, why in pin], fixed


def _reply_fix(report: BugReport, culprit: str, buggy: list[tuple[str, str]], fix: list[tuple[str, str]],
               notes: list[str]) -> list[tuple[str, str]]:
    """The fix a reply names: a commit of the culprit's own repository, else a release a reply installed and said
    solved it (another library's: the culprit's buggy pins stay, the fix adds that release), else the fix
    placeholder says how a reply fixed it ("replacing labels_cuda")."""
    own = culprit != "torch" and bool(_own_repository(report.url, culprit))
    culprit = _pinned_name(culprit, buggy)  # the index's name of the repository's package, where it differs
    commit = next((fix[7:] for fix in report.fixes if fix.startswith("commit:")), "")
    if commit and own:
        notes.append(f"the fix pin is the commit a reply names ({commit}): check it is the fix, not a later one, and "
                     f"that the repository's packaging names its project {culprit} at that commit (pip refuses a "
                     "direct reference under another name)")
        return [(f"{culprit} @ {_commit_source(report.url)}@{commit}", "the commit a reply names as the fix")]
    release = next((fix[8:] for fix in report.fixes if fix.startswith("release:")), "")
    if release and own:
        notes.append(f"the fix pin {culprit}=={release} is the release a reply names as the fix: check it")
        return [(f"{culprit}=={release}", "the release a reply names as the fix")]
    pull = next((fix[3:] for fix in report.fixes if fix.startswith("pr:")), "")
    if pull and own:
        notes.append(f"a reply names pull request #{pull} as the fix: pin the first release that has it, else its "
                     "merge commit")
        if any("git+" in dist for dist, _ in buggy):  # commit pins already: the fix is the PR's merge commit
            return [(f'{MARK}: the merge commit of pull request #{pull} (a reply names it as the fix), e.g. '
                     f'"{culprit} @ {_commit_source(report.url)}@<commit>"', "")]
        return [(f"{MARK}: pin the first release with pull request #{pull} (a reply names it as the fix), e.g. "
                 f"{culprit}==X.Y.Z, or its merge commit", "")]
    pin = next((fix for fix in report.fixes if "==" in fix), "")
    if not pin:
        said = next((fix[5:] for fix in report.fixes if fix.startswith("said:")), "")
        return [(f"{dist} (a reply says it was fixed by {said})", why) if said and dist.startswith(MARK)
                else (dist, why) for dist, why in fix]
    notes.append(f"the fix pin {pin} is what a reply installed and said solved it: check it is the fix")
    if str(canonicalize_name(pin.partition("==")[0])) == culprit:
        return [(pin, "the release a reply installed and said solved it")]
    return [*buggy, (pin, "a reply installed this release and said it solved the bug")]


def _pinned_name(culprit: str, buggy: list[tuple[str, str]]) -> str:
    """The name the culprit's buggy pin gives its distribution ("neuralprophet==X.Y.Z" for the repository
    neural_prophet, once the index's name was found), else the culprit."""
    for dist, _ in buggy:
        named = re.search(r"(?:^|e\.g\. \"?)(?P<name>[A-Za-z0-9][\w.-]*)(?:==| @ git\+)", dist)
        if named:
            return str(canonicalize_name(named["name"]))
    return culprit


def _stated_version(culprit: str, buggy: list[tuple[str, str]]) -> str:
    return next((dist.partition("==")[2] for dist, _ in buggy if dist.startswith(f"{culprit}==")), "")


def _release_on_index(culprit: str, stated: str, known: tuple[str, ...] | None, url: str,
                      buggy: list[tuple[str, str]], fix: list[tuple[str, str]],
                      notes: list[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """A release the report states that the index does not have (a GitHub-only tag, fish-speech's v1.1.0 where PyPI
    has 0.1.0): the report ran the repository's code, so both variants pin commits; unknown: said, kept."""
    if known is None:
        notes.append(f"{culprit} {stated} was not checked against the package index (no answer): check it is there")
        return buggy, fix
    if not _beyond(stated, known):
        return buggy, fix
    source = _commit_source(url)
    latest = f" (its releases there end at {known[-1]})"
    notes.append(f"the package index has no {culprit} {stated}{latest}: the report ran a release of the repository "
                 f"that is not on the index, so the variants pin commits ({culprit} @ {source}@COMMIT)")
    tag = (f'{MARK}: the index has no {culprit} {stated}: pin the commit of its tag, '
           f'e.g. "{culprit} @ {source}@<commit>"')
    pin = [(tag, why) if dist == f"{culprit}=={stated}" else (dist, why) for dist, why in buggy]
    return pin, [(f'{MARK}: the commit that fixed it, e.g. "{culprit} @ {source}@<commit>"', "")]


def _commit_source(url: str) -> str:
    """The git URL of the report's repository, for a commit pin."""
    repo = re.match(r"https?://github\.com/[\w.-]+/[\w.-]+", url)
    return f"git+{repo.group()}" if repo else "git+https://github.com/OWNER/REPO"


def _beyond(stated: str, known: tuple[str, ...]) -> bool:
    """Whether a stated release is newer than every release the index lists (the index lists only releases that
    install on this Python, so an older release it omits may still exist: only a newer one is taken as missing)."""
    try:
        return bool(known) and Version(stated) > max(Version(version) for version in known)
    except InvalidVersion:
        return False
