"""Almost Locked Sets: ALS-XZ, ALS-XY-Wing and ALS chains (HoDoKu's ALS-XY-Chain).

An almost locked set (ALS) is N unfilled cells of one house holding N + 1 digits between them: take
any one digit away and the other N are locked in those cells. Two ALSs A and B share a *restricted
common* digit x when every x of A sees every x of B, so x is in at most one of them; the other one
is then locked and holds all its other digits. With a second common digit z: whichever set loses
x keeps z, so z is in A or in B, and a cell that sees every z of both sets cannot be z (ALS-XZ).
ALS-XY-Wing and ALS chains link more sets the same way, each link a different restricted common.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from sudokupool.sudoku.candidates import ALL, BIT, DIGITS_OF, POPCOUNT, Candidates
from sudokupool.sudoku.grid import HOUSES, PEER_MASK, cell_name
from sudokupool.sudoku.techniques.memo import digit_masks, kept
from sudokupool.sudoku.techniques.step import Step, digit_list, join, names, removal_text

MAX_SIZE = 5
MAX_WORK = 20_000  # partial chains an ALS-chain search extends before it gives up
_EVERYWHERE = (1 << 81) - 1


@dataclass(frozen=True)
class Als:
    cells: tuple[int, ...]
    house: int
    digits: int  # candidate mask
    where: int  # cells as a bitmask
    spots: dict[int, int]  # digit -> its cells in the set, as a bitmask
    sees: dict[int, int]  # digit -> cells that see every one of its cells in the set

    def text(self) -> str:
        return f"{names(self.cells)} ({digit_list(DIGITS_OF[self.digits])})"


def _seen_by_all(mask: int) -> int:
    seen = _EVERYWHERE
    while mask:
        low = mask & -mask
        seen &= PEER_MASK[low.bit_length() - 1]
        mask ^= low
    return seen


_cache: dict[tuple[int, ...], tuple[list[Als], dict[int, list[tuple[int, int]]], tuple[int, ...]]] = kept({})


def _state(cg: Candidates) -> tuple[list[Als], dict[int, list[tuple[int, int]]], tuple[int, ...]]:
    """The sets, their restricted-common links and each digit's cells (as bitmasks) for ``cg``,
    kept for the last candidate state: the ALS techniques are tried one after another on it."""
    key = tuple(cg.cands)
    if key not in _cache:
        alses = find_alses(cg)
        masks = digit_masks(cg)
        # Index the sets by digit and the lowest cell holding it, so a set only meets the sets whose
        # cells for the digit start where it sees them all.
        lowest: list[dict[int, list[tuple[int, int, int]]]] = [{} for _ in range(10)]
        for j, b in enumerate(alses):
            for x, spots in b.spots.items():
                lowest[x].setdefault((spots & -spots).bit_length() - 1, []).append((j, spots, b.where))
        links: dict[int, list[tuple[int, int]]] = {}
        for i, a in enumerate(alses):
            out: list[tuple[int, int]] = []
            a_where = a.where
            for x in DIGITS_OF[a.digits]:
                region = a.sees[x] & ~a_where
                beyond = ~region
                starts = region & masks[x]
                index = lowest[x]
                while starts:
                    low = starts & -starts
                    starts ^= low
                    for j, spots, b_where in index.get(low.bit_length() - 1, ()):
                        if not b_where & a_where and not spots & beyond:
                            out.append((j, x))
            if out:
                out.sort()
                links[i] = out
        _cache.clear()
        _cache[key] = (alses, links, masks)
    return _cache[key]


def find_alses(cg: Candidates) -> list[Als]:
    cands = cg.cands
    found: dict[tuple[int, ...], Als] = {}
    for h in range(27):
        # A set in two houses (a row or column inside a box) counts for the first of them.
        for a in _house_alses(cands, h):
            if a.cells not in found:
                found[a.cells] = a
    # Houses in order, then smaller sets first, then cell order: the order the searches meet them.
    return sorted(found.values(), key=lambda a: (a.house, len(a.cells), a.cells))


# The sets of one house, by the house and its cells' candidates: a step changes a few houses, so
# most houses' sets carry over to the next step's search. A hard puzzle's solve meets a few hundred
# such keys; the cap keeps a long-running process's cache to a few megabytes.
HOUSE_CACHE_MAX = 500
_house_cache: dict[tuple[int, ...], list[Als]] = kept({})


def _house_alses(cands: list[int], h: int) -> list[Als]:
    house = HOUSES[h]
    key = (h, *(cands[c] for c in house))
    if key in _house_cache:
        return _house_cache[key]
    empty = [c for c in house if cands[c]]
    top = min(MAX_SIZE, len(empty) - 1)
    out: list[Als] = []
    # Depth first over growing cell sets; a set with more than MAX_SIZE + 1 digits never shrinks back.
    stack: list[tuple[int, tuple[int, ...], int]] = [(0, (), 0)]
    while stack:
        nxt, cells, digits = stack.pop()
        for k in range(nxt, len(empty)):
            c = empty[k]
            union = digits | cands[c]
            n = POPCOUNT[union]
            grown = (*cells, c)
            size = len(grown)
            if n > top + 1:
                continue
            if n == size + 1:
                spots = {d: sum(1 << e for e in grown if cands[e] & BIT[d]) for d in DIGITS_OF[union]}
                out.append(
                    Als(
                        grown,
                        h,
                        union,
                        sum(1 << e for e in grown),
                        spots,
                        {d: _seen_by_all(m) for d, m in spots.items()},
                    )
                )
            if size < top:
                stack.append((k + 1, grown, union))
    if len(_house_cache) >= HOUSE_CACHE_MAX:
        _house_cache.clear()
    _house_cache[key] = out
    return out


def _targets(masks: tuple[int, ...], a: Als, b: Als, z: int) -> list[tuple[int, int]]:
    mask = a.sees[z] & b.sees[z] & masks[z] & ~(a.where | b.where)
    out = []
    while mask:
        low = mask & -mask
        out.append((low.bit_length() - 1, z))
        mask ^= low
    return out


def als_xz(cg: Candidates) -> Step | None:
    alses, links, masks = _state(cg)
    for i, around in links.items():
        a = alses[i]
        for j, x in around:
            if j < i:
                continue
            b = alses[j]
            a_sees, b_sees = a.sees, b.sees
            for z in DIGITS_OF[a.digits & b.digits & ~BIT[x]]:
                # Most pairs remove nothing: look at the cells seeing both before listing them.
                if not a_sees[z] & b_sees[z] & masks[z]:
                    continue
                elim = _targets(masks, a, b, z)
                if elim:
                    return Step(
                        "Almost Locked Set XZ-Rule",
                        eliminations=elim,
                        cells=[*a.cells, *b.cells],
                        houses=[a.house, b.house],
                        digits=[x, z],
                        explanation=f"A = {a.text()} and B = {b.text()} each hold one digit more than cells; their "
                        f"{x}s all see each other, so one set has no {x} and is locked, and either way {z} is in A "
                        f"or B: remove {removal_text(elim)}.",
                    )
    return None


def als_xy_wing(cg: Candidates) -> Step | None:
    alses, links, masks = _state(cg)
    for pivot, around in links.items():
        c = alses[pivot]
        for (i, x), (j, y) in combinations(around, 2):
            if x == y or i == j:
                continue
            a, b = alses[i], alses[j]
            if a.where & b.where:
                continue
            for z in DIGITS_OF[a.digits & b.digits & ~BIT[x] & ~BIT[y]]:
                if not a.sees[z] & b.sees[z] & masks[z]:
                    continue
                elim = [(cell, d) for cell, d in _targets(masks, a, b, z) if not c.where >> cell & 1]
                if elim:
                    return Step(
                        "Almost Locked Set XY-Wing",
                        eliminations=elim,
                        cells=[*a.cells, *b.cells, *c.cells],
                        houses=[a.house, b.house, c.house],
                        digits=[x, y, z],
                        explanation=f"C = {c.text()} shares a restricted {x} with A = {a.text()} and a restricted "
                        f"{y} with B = {b.text()}; C cannot hold both, so A or B is locked without its link, and "
                        f"{z} is in A or B: remove {removal_text(elim)}.",
                    )
    return None


def als_chain(cg: Candidates) -> Step | None:
    """A chain of four sets A1 -x1- A2 -x2- A3 -x3- A4, each link a restricted common different from
    the one before; z common to A1 and A4 (and not their links) is in A1 or A4. (Chains of two and
    three sets are ALS-XZ and ALS-XY-Wing.)

    Depth first from each set in turn, at most MAX_WORK partial chains: each set reached counts as
    one, and so does each fourth set that does not overlap the first three; the later links of a set
    are tried first, the order a stack of partial chains would give them."""
    alses, links, masks = _state(cg)
    where = [a.where for a in alses]
    # Each set's links with the linked set's cells, in reverse link order; and with the linked set's
    # digits other than the link's too: the inner loops reject most links by these alone.
    onward = {i: [(j, x, where[j]) for j, x in reversed(out)] for i, out in links.items()}
    backward = {i: [(j, x, where[j], alses[j].digits & ~BIT[x]) for j, x in reversed(out)] for i, out in links.items()}
    # The links of a second set, and the closing links of a third, without those on the digit it was
    # reached by, by ``set * 10 + digit``, made as the search meets them.
    thirds_of: dict[int, list[tuple[int, int, int]]] = {}
    closers: dict[int, list[tuple[int, int, int, int]]] = {}
    work = 0
    for start, seconds in onward.items():
        if work >= MAX_WORK:
            return None
        work += 1
        first = alses[start]
        # Where each digit of the first set could be removed: seen by all its cells for the digit.
        near = {z: first.sees[z] & masks[z] for z in DIGITS_OF[first.digits]}
        for second, x1, second_where in seconds:
            if second_where & where[start]:
                continue
            if work >= MAX_WORK:
                return None
            work += 1
            keep = first.digits & ~BIT[x1]
            used2 = where[start] | second_where
            thirds = thirds_of.get(second * 10 + x1)
            if thirds is None:
                thirds = thirds_of[second * 10 + x1] = [t for t in onward.get(second, ()) if t[1] != x1]
            for third, x2, third_where in thirds:
                if third_where & used2:
                    continue
                if work >= MAX_WORK:
                    return None
                work += 1
                used = used2 | third_where
                closing = closers.get(third * 10 + x2)
                if closing is None:
                    closing = closers[third * 10 + x2] = [t for t in backward.get(third, ()) if t[1] != x2]
                for fourth, x3, end_where, end_digits in closing:
                    if end_where & used:
                        continue
                    if work >= MAX_WORK:
                        return None
                    work += 1
                    free = keep & end_digits
                    if not free:
                        continue
                    end = alses[fourth]
                    outside = ~(used | end_where)
                    for z in DIGITS_OF[free]:
                        if near[z] & end.sees[z] & outside:
                            return _chain_step(
                                masks, [alses[i] for i in (start, second, third, fourth)], [x1, x2, x3], z
                            )
    return None


def _chain_step(masks: tuple[int, ...], sets: list[Als], links_used: list[int], z: int) -> Step:
    first, end = sets[0], sets[-1]
    inside = 0
    for s in sets:
        inside |= s.where
    elim = [(c, d) for c, d in _targets(masks, first, end, z) if not inside >> c & 1]
    chain = sets[0].text() + "".join(f" -{v}- {s.text()}" for v, s in zip(links_used, sets[1:], strict=True))
    return Step(
        "Almost Locked Set XY-Chain",
        eliminations=elim,
        cells=[c for s in sets for c in s.cells],
        houses=[s.house for s in sets],
        digits=sorted({*links_used, z}),
        explanation=f"The sets {chain} are linked by restricted commons "
        f"({', '.join(map(str, links_used))}); each link takes its digit from at most one side, "
        f"so {z} is in the first or the last set: remove {removal_text(elim)}.",
    )


MAX_STEM = 4  # candidates of a Death Blossom's stem cell


def death_blossom(cg: Candidates) -> Step | None:
    """A stem cell and, for each of its candidates d, an ALS (a petal) whose every d sees the stem;
    the petals do not overlap. Whatever digit the stem holds, that petal loses it and is locked, so
    a digit z in every petal (and not in the stem) is in one of them: a cell that sees every z of
    every petal cannot be z.

    HoDoKu's Death Blossom (score 360, UNFAIR); like HoDoKu's default solver, the grader does not
    try it (it is not in ``ADVANCED``; docs/grading.md says why). At most MAX_WORK petal choices."""
    alses, _, masks = _state(cg)
    cands = cg.cands
    work = 0
    for stem in range(81):
        digits = DIGITS_OF[cands[stem]]
        if not 2 <= len(digits) <= MAX_STEM:
            continue
        sbit = 1 << stem
        options: list[list[Als]] = []
        for d in digits:
            petals = [a for a in alses if a.digits & BIT[d] and not a.where & sbit and a.sees[d] & sbit]
            if not petals:
                break
            options.append(petals)
        else:
            stack: list[tuple[list[Als], int, int]] = [([], sbit, ALL & ~cands[stem])]
            while stack and work < MAX_WORK:
                work += 1
                chosen, where, common = stack.pop()
                k = len(chosen)
                if k == len(digits):
                    for z in DIGITS_OF[common]:
                        mask = masks[z] & ~where
                        for a in chosen:
                            mask &= a.sees[z]
                        if mask:
                            return _blossom_step(stem, digits, chosen, z, mask)
                    continue
                for a in reversed(options[k]):
                    if not a.where & where and common & a.digits:
                        stack.append(([*chosen, a], where | a.where, common & a.digits))
    return None


def _blossom_step(stem: int, digits: tuple[int, ...], petals: list[Als], z: int, mask: int) -> Step:
    elim = []
    while mask:
        low = mask & -mask
        elim.append((low.bit_length() - 1, z))
        mask ^= low
    petal_text = join([f"every {d} of {a.text()}" for d, a in zip(digits, petals, strict=True)])
    return Step(
        "Death Blossom",
        eliminations=elim,
        cells=[stem, *(c for a in petals for c in a.cells)],
        houses=[a.house for a in petals],
        digits=sorted({*digits, z}),
        explanation=f"The stem {cell_name(stem)} ({digit_list(digits)}) sees {petal_text}; whichever digit "
        f"it holds, that set loses it and is locked, so {z} is in one of the sets: remove {removal_text(elim)}.",
    )
