// The moves of a game and undo (static/game.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import * as g from "../../../src/sudokupool/web/static/game.js";
import { PEERS, candidateMask, parseGrid } from "../../../src/sudokupool/web/static/sudoku.js";

const PUZZLE = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79";
const SOLUTION = Array.from("534678912672195348198342567859761423426853791713924856961537284287419635345286179", Number);
const newGame = () => ({
  values: parseGrid(PUZZLE),
  marks: Array(81).fill(0),
  revealed: new Set(),
  undo: [],
  solved: false,
});

test("a digit fills the cell, leaves its peers' marks and is undone", () => {
  const game = newGame();
  for (const j of PEERS[2]) game.marks[j] = 1 << 4;
  g.enterDigit(game, 2, 4);
  assert.equal(game.values[2], 4);
  assert.ok(PEERS[2].every((j) => game.marks[j] === 0));
  assert.ok(g.undo(game));
  assert.deepEqual(game.values, parseGrid(PUZZLE));
  assert.equal(game.marks[3], 1 << 4);
  assert.ok(!g.undo(game)); // nothing left
});

test("pencil marks toggle in empty cells only", () => {
  const game = newGame();
  assert.ok(g.toggleMark(game, 2, 1));
  assert.ok(g.toggleMark(game, 2, 4));
  assert.equal(game.marks[2], (1 << 1) | (1 << 4));
  assert.ok(g.toggleMark(game, 2, 1));
  assert.equal(game.marks[2], 1 << 4);
  assert.ok(!g.toggleMark(game, 0, 3)); // r1c1 holds a 5
  assert.equal(game.undo.length, 3);
});

test("erasing takes the digit first, then the marks, then refuses", () => {
  const game = newGame();
  game.marks[2] = 1 << 4;
  g.enterDigit(game, 2, 1);
  game.marks[2] = 1 << 4; // marks kept under a digit
  game.revealed.add(2);
  assert.ok(g.eraseCell(game, 2));
  assert.deepEqual([game.values[2], game.marks[2], game.revealed.has(2)], [0, 1 << 4, false]);
  assert.ok(g.eraseCell(game, 2));
  assert.equal(game.marks[2], 0);
  const remembered = game.undo.length;
  assert.ok(!g.eraseCell(game, 2));
  assert.equal(game.undo.length, remembered);
});

test("undo keeps the last UNDO_LIMIT grids and does nothing once solved", () => {
  const game = newGame();
  for (let n = 0; n < g.UNDO_LIMIT + 5; n++) g.toggleMark(game, 2, 1 + (n % 9));
  assert.equal(game.undo.length, g.UNDO_LIMIT);
  game.solved = true;
  const marks = [...game.marks];
  assert.ok(!g.undo(game));
  assert.deepEqual(game.marks, marks);
});

test("auto marks write every empty cell's candidates", () => {
  const game = newGame();
  g.fillMarks(game);
  assert.equal(game.marks[0], 0);
  assert.equal(game.marks[2], candidateMask(game.values, 2));
  assert.ok(g.undo(game));
  assert.ok(game.marks.every((m) => m === 0));
});

test("revealing fills from the solution and counts only the cells that change", () => {
  const game = newGame();
  g.revealCell(game, 2, SOLUTION);
  assert.equal(game.values[2], 4);
  assert.deepEqual([...game.revealed], [2]);
  const one = newGame();
  g.enterDigit(one, 2, 4); // right
  g.enterDigit(one, 3, 1); // wrong: r1c4 is 6
  g.revealAll(one, SOLUTION);
  assert.deepEqual(one.values, SOLUTION);
  assert.ok(!one.revealed.has(0) && !one.revealed.has(2) && one.revealed.has(3));
  assert.equal(one.revealed.size, 81 - 30 - 1);
});

test("a hint's step is followed and undone as one move", () => {
  const game = newGame();
  g.followStep(game, { placements: [{ cell: "r1c3", digit: 4 }], eliminations: [{ cell: "r1c4", digit: 2 }] });
  assert.equal(game.values[2], 4);
  assert.equal(game.marks[3] & (1 << 2), 0);
  assert.notEqual(game.marks[3], 0);
  assert.ok(g.undo(game));
  assert.equal(game.values[2], 0);
  assert.equal(game.marks[3], 0);
});

test("wrong cells are the filled ones that differ from the solution", () => {
  const values = parseGrid(PUZZLE);
  values[2] = 4;
  values[3] = 1;
  assert.deepEqual(g.wrongCells(values, SOLUTION), [3]);
  assert.deepEqual(g.wrongCells(values, SOLUTION, [2]), []);
  assert.equal(g.wrongCells(values, null).length, 32); // without a solution every filled cell counts (30 givens, 2 entries)
});

test("arrows move within the grid, from the first cell when none is selected", () => {
  assert.equal(g.moveFrom(-1, 0, 1), 1);
  assert.equal(g.moveFrom(40, -1, 0), 31);
  assert.equal(g.moveFrom(0, -1, -1), 0);
  assert.equal(g.moveFrom(80, 1, 1), 80);
  assert.equal(g.moveFrom(8, 0, 1), 8);
});
