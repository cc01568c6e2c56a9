// A puzzle as people paste it, read as `sudokupool grade` reads its input (sudokupool/sudoku/pasted.py): one a
// line (a line's first field, so "PUZZLE 7.2" works), or a grid spread over lines and written with spaces, rules
// and box-drawing characters between its cells. Pure: app.js sends what it reads to the API.

const CELL_CHARS = new Set("1234567890._");
// What people put between cells when they write a grid out: spaces, rules drawn with ASCII, commas, and the
// box-drawing block (U+2500-U+257F) that pretty printers use.
const SEPARATORS = new Set(" \t\r\n\f\v|-+=:;,");
const isSeparator = (ch) => SEPARATORS.has(ch) || (ch >= "\u2500" && ch <= "\u257f");

/** The cells written in `text` (`_` and `0` as `.`), or null when it holds anything but cells and separators. */
function cellsOf(text) {
  let cells = "";
  for (const ch of text) {
    if (CELL_CHARS.has(ch)) cells += ch === "_" || ch === "0" ? "." : ch;
    else if (!isSeparator(ch)) return null;
  }
  return cells;
}

/** The first puzzle written in `text`, as pasted.py's `read_puzzles` finds it: its cells, or when malformed the
 *  field as written; null when the text holds none. `#` starts a comment. */
function firstPuzzle(text) {
  let pending = "";
  for (const [number, raw] of text.split(/\r\n|\r|\n/).entries()) {
    const line = (number === 0 ? raw.replace(/^\ufeff/, "") : raw).split("#", 1)[0];
    const fields = line.trim().split(/\s+/).filter(Boolean);
    if (!fields.length) continue;
    const first = cellsOf(fields[0]);
    if (first !== null && first.length === 81) return pending || first;
    const cells = cellsOf(line);
    if (cells !== null && cells.length <= 81) {
      if (pending.length + cells.length > 81) return pending;
      pending += cells;
      if (pending.length === 81) return pending;
      continue;
    }
    return pending || fields[0];
  }
  return pending || null;
}

/** The puzzle pasted in `text`: `{ grid }`, its 81 cells with "." for an empty one, or `{ error }` saying what is
 *  wrong with it in words a player reads. */
export function readPasted(text) {
  const found = firstPuzzle(text);
  if (found === null) {
    return { error: "Paste a puzzle first: its 81 cells, digits 1–9 and . or 0 for an empty cell." };
  }
  if (cellsOf(found) === null) {
    const shown = found.length > 24 ? `${found.slice(0, 24)}…` : found;
    return { error: `“${shown}” is not part of a puzzle: use digits 1–9, and . or 0 for an empty cell.` };
  }
  if (found.length !== 81) return { error: `A puzzle has 81 cells; this one has ${found.length}.` };
  return { grid: found };
}
