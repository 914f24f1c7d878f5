# The prbot GitHub Action (see action.yml and docs/action.md).
#
# Two stages: the first installs prbot and its pinned dependencies (constraints.txt) into a
# virtual environment; the second copies only that environment onto a clean slim Python, so no
# build tool, pip cache or source tree is left in the image. Debian's git fetches the pull
# request's two commits into a bare repository (bot/sources/git_fetch.py): nothing is checked out
# or run.

FROM python:3.12-slim AS build
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

FROM python:3.12-slim
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
# No USER: GitHub runs a Docker action as root and its docs ask for no USER instruction, since the
# runner's folders belong to the runner's user, whose id differs between runners. prbot itself takes
# the id of the workspace's owner when that user owns the step's files (bot/github_action/privileges.py).
ENTRYPOINT ["prbot", "action"]
