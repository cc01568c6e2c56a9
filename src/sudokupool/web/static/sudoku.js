// Grid arithmetic and the hint logic: pure functions over an 81-entry array of digits (0 = empty).

export const CELLS = [...Array(81).keys()];

export const rowOf = (i) => Math.floor(i / 9);
export const colOf = (i) => i % 9;
export const boxOf = (i) => Math.floor(rowOf(i) / 3) * 3 + Math.floor(colOf(i) / 3);

/** "r3c4" for a cell index (rows and columns 1-9, as the solve path names them). */
export const cellName = (i) => `r${rowOf(i) + 1}c${colOf(i) + 1}`;

/** The index of a cell named "r3c4", or -1. */
export function cellIndex(name) {
  const m = /^r([1-9])c([1-9])$/.exec(name);
  return m ? (Number(m[1]) - 1) * 9 + Number(m[2]) - 1 : -1;
}

/** The cells of a house named "row 3", "column 5" or "box 7" (empty for anything else). */
export function houseCells(house) {
  const m = /^(row|column|box) ([1-9])$/.exec(house);
  if (!m) return [];
  const n = Number(m[2]) - 1;
  if (m[1] === "row") return CELLS.filter((i) => rowOf(i) === n);
  if (m[1] === "column") return CELLS.filter((i) => colOf(i) === n);
  return CELLS.filter((i) => boxOf(i) === n);
}

/** For every cell, the 20 cells that share its row, column or box. */
export const PEERS = CELLS.map((i) =>
  CELLS.filter((j) => j !== i && (rowOf(j) === rowOf(i) || colOf(j) === colOf(i) || boxOf(j) === boxOf(i))),
);

/** Digits 1-9 of an 81-character puzzle string ('.' or '0' for empty). */
export function parseGrid(text) {
  return Array.from(text, (ch) => (ch >= "1" && ch <= "9" ? Number(ch) : 0));
}

/** The cells whose digit repeats in one of their houses. */
export function conflicts(values) {
  const bad = new Set();
  for (const i of CELLS) {
    if (values[i] && PEERS[i].some((j) => values[j] === values[i])) bad.add(i);
  }
  return bad;
}

/** Bit mask of the digits (bit d for digit d) that no peer of cell i holds. */
export function candidateMask(values, i) {
  let mask = 0b1111111110;
  for (const j of PEERS[i]) if (values[j]) mask &= ~(1 << values[j]);
  return mask;
}

/** The digits 1-9 set in a bit mask (bit d for digit d). */
export const digitsOf = (mask) => [1, 2, 3, 4, 5, 6, 7, 8, 9].filter((d) => mask & (1 << d));

/** Every empty cell's candidates as pencil marks (0 for a filled cell). */
export const candidateMarks = (values) => CELLS.map((i) => (values[i] ? 0 : candidateMask(values, i)));

/** Places a digit in cell i, in place: it can no longer be a candidate of its peers, so it leaves their marks. */
export function placeDigit(values, marks, i, digit) {
  values[i] = digit;
  for (const j of PEERS[i]) marks[j] &= ~(1 << digit);
}

/**
 * Carries out a solve-path step on the grid and its pencil marks, in place. A removal in an empty cell without
 * pencil marks writes that cell's candidates first, so the removal shows (and stays done).
 */
export function applyStep(values, marks, step) {
  for (const { cell, digit } of step.placements ?? []) placeDigit(values, marks, cellIndex(cell), digit);
  for (const { cell, digit } of step.eliminations ?? []) {
    const i = cellIndex(cell);
    if (!values[i]) marks[i] = (marks[i] || candidateMask(values, i)) & ~(1 << digit);
  }
}

/** True when every cell holds a digit and no digit repeats: with a unique solution, that is the solution. */
export const isSolved = (values) => values.every((v) => v > 0) && conflicts(values).size === 0;

/** The solution the solve path spells out (its placements fill every empty cell), or null if it does not. */
export function solutionFromPath(puzzle, path) {
  if (!Array.isArray(path)) return null;
  const grid = parseGrid(puzzle);
  for (const step of path) {
    for (const { cell, digit } of step.placements ?? []) {
      const i = cellIndex(cell);
      if (i >= 0) grid[i] = digit;
    }
  }
  return grid.every((v) => v > 0) ? grid : null;
}

/**
 * What to show when the player asks for a hint on their current grid.
 *
 * - { kind: "mistake", cells } when some entries disagree with the solution: following a step from a
 *   wrong grid would only mislead, so those come first.
 * - { kind: "step", index, step } for the first step of the solve path that still applies: a step that
 *   places a digit the player has not placed yet, or a step that only removes candidates, when one of
 *   them is still a candidate in an empty cell (and not already struck from the player's pencil marks)
 *   and the player has not been shown it yet (`seen`, step indices): a player who keeps no pencil
 *   marks would otherwise be shown the same removal again and again.
 * - { kind: "done" } when nothing is left, { kind: "none" } when the puzzle has no solve path.
 *
 * `marks` holds each cell's pencil marks as a bit mask (0 = none written).
 */
export function nextHint(puzzle, values, marks, path, solution, seen = new Set()) {
  const expected = solutionFromPath(puzzle, path) ?? solution;
  if (expected) {
    const wrong = CELLS.filter((i) => values[i] && values[i] !== expected[i]);
    if (wrong.length) return { kind: "mistake", cells: wrong };
  }
  if (!Array.isArray(path)) return { kind: "none" };
  for (const [index, step] of path.entries()) {
    const placements = step.placements ?? [];
    if (placements.length) {
      if (placements.some(({ cell, digit }) => values[cellIndex(cell)] !== digit)) return { kind: "step", index, step };
      continue;
    }
    if (seen.has(index)) continue;
    const matters = (step.eliminations ?? []).some(({ cell, digit }) => {
      const i = cellIndex(cell);
      if (i < 0 || values[i]) return false;
      const bit = 1 << digit;
      if (marks[i] && !(marks[i] & bit)) return false;
      return (candidateMask(values, i) & bit) !== 0;
    });
    if (matters) return { kind: "step", index, step };
  }
  return { kind: "done" };
}

/** The cells a step names, by role: houses it reasons about, cells that justify it, targets. */
export function stepCells(step) {
  const names = (list) => (list ?? []).map((x) => cellIndex(typeof x === "string" ? x : x.cell)).filter((i) => i >= 0);
  return {
    houses: new Set((step.houses ?? []).flatMap(houseCells)),
    cells: new Set(names(step.cells)),
    placements: new Set(names(step.placements)),
    eliminations: new Set(names(step.eliminations)),
  };
}
