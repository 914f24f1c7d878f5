"""`recipe-selection`: every (point, concurrency) of a changed key selects exactly one variant."""

from __future__ import annotations

from bot.checks.context import CheckContext
from bot.findings import Finding, Severity, finding, from_problem
from bot.model.master import Point
from bot.model.recipe import Recipe
from bot.model.selection import MAX_RUN_CHOICES, choices, select

CHECK = "recipe-selection"


def _recipe_problems(recipe: Recipe, key: str | None, changed: bool) -> list[Finding]:
    """Problems in a recipe block when this PR changed the file; older ones only warn."""
    severity = Severity.BLOCKING if changed else Severity.WARNING
    return [from_problem(CHECK, severity, p, key) for p in recipe.problems]


def _leftovers(ctx: CheckContext, path: str, recipe: Recipe) -> list[Finding]:
    """Variants of a bundle that no point of any key using the recipe selects."""
    users = ctx.diff.recipe_users.get(path, [])
    if any(e.problems for e in users):
        return []  # points that could not be read may be the ones a variant serves
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
    out = []
    for variant in recipe.candidates(None):
        if variant.name not in used and recipe.is_bundle:
            out.append(
                finding(
                    CHECK,
                    Severity.WARNING,
                    "selection-leftover",
                    file=path,
                    line=variant.line,
                    variant=variant.name,
                    users=[e.key for e in users],
                )
            )
    return out


def check(ctx: CheckContext) -> list[Finding]:
    out: list[Finding] = ctx.no_masters(CHECK) if ctx.diff.no_masters else ctx.unreadable(CHECK)
    recipes = ctx.diff.recipes_head
    checked_recipes: set[str] = set()
    legacy_missing: dict[str, list[Point]] = {}
    any_recipe = False
    for change in ctx.live_keys():
        entry = change.head
        assert entry is not None
        mapping: list[tuple[int, str]] = []
        clean = True
        for point in entry.points:
            if point.recipe is None:
                continue
            any_recipe = True
            recipe = recipes.get(point.recipe)
            if recipe is None:
                clean = False
                if point.multinode and "/multi_node/" in point.recipe:  # an older CONFIG_FILE reference
                    legacy_missing.setdefault(change.key, []).append(point)
                    continue
                out.append(
                    finding(
                        CHECK,
                        Severity.BLOCKING,
                        "selection-recipe-missing",
                        **point.where,
                        path=point.recipe,
                    )
                )
                continue
            if point.recipe not in checked_recipes:
                checked_recipes.add(point.recipe)
                problems = _recipe_problems(recipe, change.key, point.recipe in ctx.diff.changed_recipes)
                out += problems
                clean = clean and not problems
            if point.selector and point.selector not in recipe.variants:
                out.append(
                    finding(
                        CHECK,
                        Severity.BLOCKING,
                        "selection-unknown-selector",
                        **point.where,
                        selector=point.selector,
                        path=point.recipe,
                    )
                )
                clean = False
                continue
            if not recipe.variants:  # unreadable or refused: its problems say why, once
                out.append(
                    finding(
                        CHECK,
                        Severity.BLOCKING,
                        "selection-recipe-unusable",
                        **point.where,
                        key=change.key,
                        runs=len(point.concurrencies),
                        path=point.recipe,
                    )
                )
                clean = False
                continue
            for conc in point.concurrencies:
                chosen = select(recipe, point, conc)
                if len(chosen) == 1:
                    mapping.append((conc, chosen[0].name))
                    continue
                clean = False
                message = "selection-none" if not chosen else "selection-ambiguous"
                out.append(
                    finding(
                        CHECK,
                        Severity.BLOCKING,
                        message,
                        **point.where,
                        key=change.key,
                        concurrency=conc,
                        tp=point.tp,
                        path=point.recipe,
                        variants=[v.name for v in chosen],
                    )
                )
        if mapping:  # what was checked and held, also beside a key's failures
            out.append(
                finding(
                    CHECK,
                    Severity.VERIFIED,
                    "selection-ok" if clean else "selection-partial",
                    config_key=change.key,
                    key=change.key,
                    mapping=sorted(mapping),
                )
            )
    for key, points in legacy_missing.items():  # one finding per key: such keys often have dozens
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
    for path in sorted(checked_recipes):
        recipe = recipes.get(path)
        if recipe is not None and not recipe.problems:
            out += _leftovers(ctx, path, recipe)
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
    return out
