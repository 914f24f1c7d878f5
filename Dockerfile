# The prbot GitHub Action (see action.yml and docs/action.md).
#
# Two stages: the first installs prbot and its pinned dependencies (constraints.txt) into a
# virtual environment; the second copies only that environment onto a clean slim Python, so no
# build tool, pip cache or source tree is left in the image. Debian's git fetches the pull
# request's two commits into a bare repository (bot/sources/git_fetch.py): nothing is checked out
# or run.
#
# The base is pinned by digest (a Docker action is built on every run, and a moving tag changed
# from bookworm to trixie once already); Dependabot (.github/dependabot.yml) proposes the new
# digest when the tag moves. docs/action.md says where the digest comes from (public pins of the
# same tag; not yet checked against Docker Hub, which the build machines here cannot reach) and
# how to change it.

FROM python:3.12-slim-bookworm@sha256:782412e85d0f0984994c290652577d4018aff08145c85b262bb63dc0c7522254 AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_CONSTRAINT=/src/constraints.txt
WORKDIR /src
COPY pyproject.toml constraints.txt README.md ./
COPY bot ./bot
COPY templates ./templates
RUN python -m venv /opt/prbot \
    && /opt/prbot/bin/pip install --no-cache-dir . \
    && /opt/prbot/bin/pip uninstall --yes pip \
    && /opt/prbot/bin/prbot --version

FROM python:3.12-slim-bookworm@sha256:782412e85d0f0984994c290652577d4018aff08145c85b262bb63dc0c7522254
LABEL org.opencontainers.image.title="prbot" \
      org.opencontainers.image.description="Deterministic bilingual review of InferenceX benchmark-config pull requests" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV PATH=/opt/prbot/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1
# git from Debian, unpinned so that a rebuild picks up its security updates.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install --yes --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/prbot /opt/prbot
# Bytecode for the standard library (the official image ships none) and for prbot, checked against
# nothing at run time (the image never changes): each start no longer compiles what it imports.
RUN python -m compileall -q -j 0 -f --invalidation-mode unchecked-hash \
        "$(python -c 'import sysconfig; print(sysconfig.get_path("stdlib"))')" /opt/prbot/lib
# No USER: GitHub runs a Docker action as root and its docs ask for no USER instruction, since the
# runner's folders belong to the runner's user, whose id differs between runners. prbot itself takes
# the id of the workspace's owner when that user owns the step's files (bot/github_action/privileges.py).
ENTRYPOINT ["prbot", "action"]
