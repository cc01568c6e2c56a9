// A pasted puzzle read as `sudokupool grade` reads one (static/pasted.js; sudokupool/sudoku/pasted.py).
import assert from "node:assert/strict";
import { test } from "node:test";

import { readPasted } from "../../../src/sudokupool/web/static/pasted.js";

const GRID = "4.....8.5.3..........7......2.....6.....8.4......1.......6.3.7.5..2.....1.4......";
const ROWS = Array.from({ length: 9 }, (_, r) => GRID.slice(r * 9, r * 9 + 9));

test("a puzzle on one line, with zeros or underscores for empty cells and a rating after it", () => {
  assert.deepEqual(readPasted(GRID), { grid: GRID });
  assert.deepEqual(readPasted(`  ${GRID.replaceAll(".", "0")}  7.2\n`), { grid: GRID });
  assert.deepEqual(readPasted(`\ufeff${GRID.replaceAll(".", "_")} # from a book`), { grid: GRID });
});

test("a grid over lines, with spaces, rules and box-drawing characters between its cells", () => {
  const spaced = ROWS.map((row) => row.split("").join(" ")).join("\n");
  assert.deepEqual(readPasted(spaced), { grid: GRID });
  const ruled = ROWS.map((row, r) => {
    const line = `| ${row.slice(0, 3)} | ${row.slice(3, 6)} | ${row.slice(6)} |`;
    return r % 3 === 0 ? `+-----+-----+-----+\n${line}` : line;
  });
  assert.deepEqual(readPasted(`${ruled.join("\r\n")}\n+-----+-----+-----+`), { grid: GRID });
  const boxed = ROWS.map((row) => `│${row.slice(0, 3)}│${row.slice(3, 6)}│${row.slice(6)}│`).join("\n");
  assert.deepEqual(readPasted(`┌───┬───┬───┐\n${boxed}\n└───┴───┴───┘`), { grid: GRID });
});

test("the first of several puzzles is the one read", () => {
  const other = GRID.replace("4", ".");
  assert.deepEqual(readPasted(`${GRID}\n${other}`), { grid: GRID });
  assert.deepEqual(readPasted(`${ROWS.join("\n")}\n${other}`), { grid: GRID });
});

test("what is wrong with a paste is said in words", () => {
  assert.match(readPasted("").error, /^Paste a puzzle first/);
  assert.match(readPasted("  # only a comment\n").error, /^Paste a puzzle first/);
  assert.equal(readPasted(GRID.slice(1)).error, "A puzzle has 81 cells; this one has 80.");
  assert.equal(readPasted(ROWS.slice(0, 8).join("\n")).error, "A puzzle has 81 cells; this one has 72.");
  assert.equal(
    readPasted(`${GRID.slice(0, 40)}x${GRID.slice(41)}`).error,
    "“4.....8.5.3..........7..…” is not part of a puzzle: use digits 1–9, and . or 0 for an empty cell.",
  );
  assert.match(readPasted(`${ROWS.slice(0, 3).join("\n")}\nthe rest is lost`).error, /this one has 27\.$/);
});
