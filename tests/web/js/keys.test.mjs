// Key presses to game actions (static/keys.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { digitOf, keyAction } from "../../../src/sudokupool/web/static/keys.js";

const press = (key, extra = {}) => ({ key, code: "", altKey: false, ctrlKey: false, metaKey: false, shiftKey: false, ...extra });
const inGrid = { selected: 10, inField: false, inBoard: true, inGrid: true };

test("digits come from the key or, whatever the layout, the physical key", () => {
  assert.equal(digitOf(press("7")), 7);
  assert.equal(digitOf(press("&", { code: "Digit7" })), 7); // Shift+7 on a US layout
  assert.equal(digitOf(press("End", { code: "Numpad1" })), 1);
  assert.equal(digitOf(press("a", { code: "KeyA" })), null);
});

test("a digit fills the selected cell; Shift pencils; 0 erases", () => {
  assert.deepEqual(keyAction(press("5"), inGrid), { action: "input", digit: 5, pencil: false, prevent: true });
  assert.deepEqual(keyAction(press("%", { code: "Digit5", shiftKey: true }), inGrid), {
    action: "input",
    digit: 5,
    pencil: true,
    prevent: true,
  });
  assert.deepEqual(keyAction(press("0"), inGrid), { action: "erase", prevent: true });
  assert.equal(keyAction(press("5"), { ...inGrid, selected: -1 }), null);
});

test("arrows move only in the grid; Backspace and Delete erase a selected cell", () => {
  assert.deepEqual(keyAction(press("ArrowUp"), inGrid), { action: "move", dr: -1, dc: 0, prevent: true });
  assert.deepEqual(keyAction(press("ArrowRight"), inGrid), { action: "move", dr: 0, dc: 1, prevent: true });
  assert.equal(keyAction(press("ArrowUp"), { ...inGrid, inGrid: false }), null); // on a pad button
  assert.deepEqual(keyAction(press("Delete"), inGrid), { action: "erase", prevent: true });
  assert.equal(keyAction(press("Backspace"), { ...inGrid, selected: -1 }), null);
});

test("Ctrl+Z or Cmd+Z undoes; other shortcuts stay the browser's", () => {
  assert.deepEqual(keyAction(press("z", { ctrlKey: true }), inGrid), { action: "undo", prevent: true });
  assert.deepEqual(keyAction(press("Z", { metaKey: true, shiftKey: true }), inGrid), { action: "undo", prevent: true });
  assert.equal(keyAction(press("c", { ctrlKey: true }), inGrid), null);
  assert.equal(keyAction(press("5", { ctrlKey: true }), inGrid), null);
});

test("P and H work on the board or the page itself, not in a text field, and not with Alt", () => {
  const onPage = { selected: -1, inField: false, inBoard: true, inGrid: false };
  assert.deepEqual(keyAction(press("p"), onPage), { action: "pencil", prevent: false });
  assert.deepEqual(keyAction(press("H"), onPage), { action: "hint", prevent: false });
  assert.deepEqual(keyAction(press("h"), inGrid), { action: "hint", prevent: false });
  assert.equal(keyAction(press("h"), { ...onPage, inField: true }), null);
  assert.equal(keyAction(press("5"), { ...inGrid, inField: true }), null);
  assert.equal(keyAction(press("h", { altKey: true }), onPage), null);
  assert.equal(keyAction(press("x"), onPage), null);
});

test("keys pressed on a control beside the board (Copy link, Check) are the control's", () => {
  const beside = { selected: 10, inField: false, inBoard: false, inGrid: false };
  for (const key of ["h", "p", "5", "Backspace", "ArrowDown"]) assert.equal(keyAction(press(key), beside), null, key);
  assert.equal(keyAction(press("z", { ctrlKey: true }), beside), null);
});

test("with the letter shortcuts off, P and H do nothing; digits, arrows and erasing still work", () => {
  const off = { ...inGrid, letters: false };
  assert.equal(keyAction(press("p"), off), null);
  assert.equal(keyAction(press("H"), off), null);
  assert.deepEqual(keyAction(press("4"), off), { action: "input", digit: 4, pencil: false, prevent: true });
  assert.deepEqual(keyAction(press("ArrowLeft"), off), { action: "move", dr: 0, dc: -1, prevent: true });
  assert.deepEqual(keyAction(press("Backspace"), off), { action: "erase", prevent: true });
});
