// The moves of a game, on a plain object the view keeps: `values` and `marks` (81 entries each; marks are bit
// masks, bit d for digit d), `revealed` (a Set of cells the solution filled), `undo` (earlier grids) and
// `solved`. Each move that changes the grid first remembers it for undo. No DOM, no messages: the view
// decides whether a move is allowed and what to say.

// Load the grid logic with this file's own ?v= so the page's modules are cached (and replaced) together.
const { CELLS, applyStep, candidateMarks, colOf, placeDigit, rowOf } = await import(
  `./sudoku.js${new URL(import.meta.url).search}`
);

export const UNDO_LIMIT = 300;

/** Remembers the grid and its marks for undo, keeping the last UNDO_LIMIT only. */
export function remember(game) {
  game.undo.push({ values: [...game.values], marks: [...game.marks] });
  if (game.undo.length > UNDO_LIMIT) game.undo.shift();
}

/** Puts the grid back as it was before the last move; false when there is nothing to undo (or it is solved). */
export function undo(game) {
  const last = game.undo.pop();
  if (!last || game.solved) return false;
  game.values = last.values;
  game.marks = last.marks;
  return true;
}

/** Writes a digit in cell i, striking it from its peers' pencil marks. */
export function enterDigit(game, i, digit) {
  remember(game);
  placeDigit(game.values, game.marks, i, digit);
  game.revealed.delete(i);
}

/** Toggles a pencil mark in cell i; false (and nothing remembered) when the cell holds a digit. */
export function toggleMark(game, i, digit) {
  if (game.values[i]) return false;
  remember(game);
  game.marks[i] ^= 1 << digit;
  return true;
}

/** Erases cell i's digit, or else its pencil marks; false when it holds neither. */
export function eraseCell(game, i) {
  if (!game.values[i] && !game.marks[i]) return false;
  remember(game);
  if (game.values[i]) game.values[i] = 0;
  else game.marks[i] = 0;
  game.revealed.delete(i);
  return true;
}

/** Writes every empty cell's candidates as its pencil marks. */
export function fillMarks(game) {
  remember(game);
  game.marks = candidateMarks(game.values);
}

/** Fills cell i from the solution. */
export function revealCell(game, i, solution) {
  remember(game);
  placeDigit(game.values, game.marks, i, solution[i]);
  game.revealed.add(i);
}

/** Fills the whole grid from the solution; the cells that change count as revealed. */
export function revealAll(game, solution) {
  remember(game);
  for (const i of CELLS) {
    if (game.values[i] !== solution[i]) game.revealed.add(i);
    game.values[i] = solution[i];
  }
}

/** Carries out a hint's solve-path step (see sudoku.applyStep). */
export function followStep(game, step) {
  remember(game);
  applyStep(game.values, game.marks, step);
}

/** The filled cells whose digit differs from the solution (none without a solution). */
export const wrongCells = (values, solution, cells = CELLS) =>
  cells.filter((i) => values[i] && values[i] !== solution?.[i]);

/** The cell an arrow key moves to from cell i (from the first cell when none is selected), staying on the grid. */
export function moveFrom(i, dr, dc) {
  const from = i < 0 ? 0 : i;
  const r = Math.min(8, Math.max(0, rowOf(from) + dr));
  const c = Math.min(8, Math.max(0, colOf(from) + dc));
  return r * 9 + c;
}
