"""`recipe-selection`: every (point, concurrency) of a changed key selects exactly one variant."""

from __future__ import annotations

from bot.checks import grouping, runlabels
from bot.checks.context import CheckContext
from bot.findings import Finding, Severity, finding, from_problem
from bot.model.master import Point
from bot.model.recipe import Recipe, Variant
from bot.model.selection import (
    MAX_RUN_CHOICES,
    choices,
    chosen_by_name,
    ep_misses,
    label_mismatches,
    nearest_misses,
    select,
)

CHECK = "recipe-selection"


def _recipe_problems(recipe: Recipe, key: str | None, changed: bool) -> list[Finding]:
    """Problems in a recipe block when this PR changed the file; older ones, and its notices, only
    warn."""
    severity = Severity.BLOCKING if changed else Severity.WARNING
    out = [from_problem(CHECK, severity, p, key) for p in recipe.problems]
    return out + [from_problem(CHECK, Severity.WARNING, p, key) for p in recipe.notices]


def _leftovers(ctx: CheckContext, path: str, recipe: Recipe) -> list[Finding] | None:
    """Variants of a bundle that no point of any key using the recipe selects (None: not looked
    for)."""
    users = ctx.diff.recipe_users.get(path, [])
    if any(e.problems for e in users):
        return None  # points that could not be read may be the ones a variant serves
    if sum(choices(recipe, p) for e in users for p in e.points if p.recipe == path) > MAX_RUN_CHOICES:
        params = {"path": path, "users": len(users), "limit": MAX_RUN_CHOICES}
        return [finding(CHECK, Severity.UNVERIFIED, "selection-leftovers-too-large", file=path, **params)]
    used: set[str] = set()
    for entry in users:
        for point in entry.points:
            if point.recipe != path:
                continue
            for conc in point.concurrencies:
                used.update(v.name for v in select(recipe, point, conc))
    if any(p.selector for e in users for p in e.points if p.recipe == path):
        used.update(p.selector for e in users for p in e.points if p.recipe == path and p.selector)
    # One warning per override: the variants a zip_override makes share its line.
    unused: dict[int | None, list[str]] = {}
    for variant in recipe.candidates(None):
        if variant.name not in used and recipe.is_bundle:
            unused.setdefault(variant.line, []).append(variant.name)
    return [
        finding(
            CHECK,
            Severity.WARNING,
            "selection-leftover",
            file=path,
            line=line,
            variant=names[0],
            variants=names,
            users=[e.key for e in users],
        )
        for line, names in unused.items()
    ]


def _leftover_counts(ctx: CheckContext, paths: set[str]) -> tuple[list[Finding], dict[str, int | None]]:
    """The left-over warnings of the recipes checked, and how many each has (None: not looked for,
    e.g. a recipe with problems, or too many comparisons)."""
    out: list[Finding] = []
    counts: dict[str, int | None] = {}
    for path in sorted(paths):
        recipe = ctx.diff.recipes_head.get(path)
        found = _leftovers(ctx, path, recipe) if recipe is not None and not recipe.problems else None
        counts[path] = None
        if found is not None:
            out += found
            if all(f.message_id == "selection-leftover" for f in found):  # not "too large to look"
                counts[path] = sum(len(f.params["variants"]) for f in found)
    return out, counts


def _summary(
    key: str, chosen: list[tuple[str, str]], clean: bool, leftovers: dict[str, int | None]
) -> Finding:
    """What was checked and held for a key: its runs, each selecting one variant, as counts (the
    variant of each run is in the report's `changes`)."""
    recipes = {path for path, _ in chosen}
    counts = [leftovers.get(path) for path in sorted(recipes)]
    return finding(
        CHECK,
        Severity.VERIFIED,
        "selection-ok" if clean else "selection-partial",
        config_key=key,
        key=key,
        runs=len(chosen),
        variants=len(set(chosen)),
        recipes=len(recipes),
        leftovers=None if None in counts else sum(c for c in counts if c is not None),
    )


def _point(point: Point, recipe: Recipe, key: str) -> tuple[list[Finding], list[str], bool]:
    """One point of a key against its recipe: the findings, the variant each of its runs selects
    (for those that select exactly one), and whether every run did."""
    if point.selector and point.selector not in recipe.variants:
        params = {"selector": point.selector, "path": point.recipe}
        return (
            [finding(CHECK, Severity.BLOCKING, "selection-unknown-selector", **point.where, **params)],
            [],
            False,
        )
    if not recipe.variants:  # unreadable or refused: its problems say why, once
        params = {"key": key, "runs": len(point.concurrencies), "path": point.recipe}
        return (
            [finding(CHECK, Severity.BLOCKING, "selection-recipe-unusable", **point.where, **params)],
            [],
            False,
        )
    out, chosen_names = [], []
    labelled: set[str] = set()  # variants whose labels were compared with the point already
    for conc in point.concurrencies:
        chosen = select(recipe, point, conc)
        if len(chosen) == 1:
            chosen_names.append(chosen[0].name)
            if chosen_by_name(recipe, point) and chosen[0].name not in labelled:
                labelled.add(chosen[0].name)
                out += _labels(point, recipe, chosen[0], key)
            continue
        params = {
            "key": key,
            "concurrency": conc,
            "topology": runlabels.topology(point),
            "path": point.recipe,
        }
        if chosen:
            message = "selection-ambiguous"
            params["variants"] = [v.name for v in chosen]
        elif misses := ep_misses(recipe, point, conc):  # say which EP each near miss serves
            message = "selection-none-ep"
            params.update(ep=point.ep, served=[[name, ep] for name, ep in misses], variants=[])
        else:
            message = "selection-none"
            params.update(variants=[], misses=nearest_misses(recipe, point, conc))
        out.append(finding(CHECK, Severity.BLOCKING, message, **point.where, **params))
    return out, chosen_names, not any(f.severity is Severity.BLOCKING for f in out)


def _labels(point: Point, recipe: Recipe, variant: Variant, key: str) -> list[Finding]:
    """A `benchmark.env` label of the one variant a point runs that says otherwise than the point:
    no launcher or client script reads it (docs/checks.md), so the run is served as the point
    says and only the label is stale."""
    return [
        finding(
            CHECK,
            Severity.WARNING,
            "selection-label-differs",
            config_key=key,
            file=point.recipe,
            line=variant.line_of(("benchmark", "env", name)),
            key=key,
            path=point.recipe,
            name=name,
            stated=stated,
            wanted=wanted,
        )
        for name, stated, wanted in label_mismatches(variant, point)
    ]


def _legacy_missing(missing: dict[str, list[Point]]) -> list[Finding]:
    """One finding per key whose older `CONFIG_FILE` recipes are absent: such keys often have dozens."""
    out = []
    for key, points in missing.items():
        paths = sorted({p.recipe for p in points if p.recipe})
        out.append(
            finding(
                CHECK,
                Severity.UNVERIFIED,
                "selection-legacy-missing",
                config_key=key,
                file=points[0].file,
                line=points[0].line,
                key=key,
                points=len(points),
                paths=len(paths),
                path=paths[0],
            )
        )
    return out


def check(ctx: CheckContext) -> list[Finding]:
    out: list[Finding] = ctx.no_masters(CHECK) if ctx.diff.no_masters else ctx.unreadable(CHECK)
    recipes = ctx.diff.recipes_head
    checked_recipes: set[str] = set()
    legacy_missing: dict[str, list[Point]] = {}
    verified: list[tuple[str, list[tuple[str, str]], bool]] = []
    any_recipe = False
    for change in ctx.live_keys():
        entry = change.head
        assert entry is not None
        chosen_variants: list[tuple[str, str]] = []  # (recipe, variant) of each run
        clean = True
        for point in entry.points:
            if point.recipe is None:
                continue
            any_recipe = True
            recipe = recipes.get(point.recipe)
            if recipe is None:
                clean = False
                if point.recipe_outside:  # an older CONFIG_FILE reference that may lie outside
                    legacy_missing.setdefault(change.key, []).append(point)
                else:
                    params = {"path": point.recipe}
                    out.append(
                        finding(CHECK, Severity.BLOCKING, "selection-recipe-missing", **point.where, **params)
                    )
                continue
            if point.recipe not in checked_recipes:
                checked_recipes.add(point.recipe)
                # its own findings: they do not make any run of the key fail to select a variant
                out += _recipe_problems(recipe, change.key, point.recipe in ctx.diff.changed_recipes)
            found, names, selected = _point(point, recipe, change.key)
            out += found
            chosen_variants += [(point.recipe, name) for name in names]
            clean = clean and selected
        if chosen_variants:  # what was checked and held, also beside a key's failures
            verified.append((change.key, chosen_variants, clean))
    out += _legacy_missing(legacy_missing)
    left, counts = _leftover_counts(ctx, checked_recipes)
    out += [_summary(key, chosen_variants, clean, counts) for key, chosen_variants, clean in verified]
    out += left
    for path in ctx.diff.changed_recipes:  # broken even where no changed key runs it
        recipe = recipes.get(path)
        if path not in checked_recipes and recipe is not None:
            out += _recipe_problems(recipe, None, True)
    if not any_recipe and (ctx.diff.keys or not (ctx.diff.unreadable_masters or ctx.diff.no_masters)):
        out.append(
            finding(
                CHECK,
                Severity.UNVERIFIED if ctx.diff.keys else Severity.VERIFIED,
                "selection-no-recipes" if ctx.diff.keys else "selection-nothing-changed",
            )
        )
    return grouping.across_files(out, {"recipe-duplicate-key": "recipe-duplicate-key-files"})
