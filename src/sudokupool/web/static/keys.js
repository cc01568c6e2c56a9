// The keyboard: which game action a key press asks for. Pure, so the page's wiring stays a switch on the answer.

/** The digit a key press types (top row or keypad, whatever the layout), or null. */
export function digitOf(event) {
  const m = /^(?:Digit|Numpad)([0-9])$/.exec(event.code ?? "") ?? /^([0-9])$/.exec(event.key);
  return m ? Number(m[1]) : null;
}

export const MOVES = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };

/**
 * The action for a key press, or null to let the browser have it.
 *
 * `event` needs `key`, `code`, `altKey`, `ctrlKey`, `metaKey` and `shiftKey`; `where` says whether a cell is
 * selected (`selected`, -1 for none), whether focus is in a text field (`inField`), on the board (`inBoard`:
 * the grid, the pad and the status bar, or the page itself with nothing focused) and in the grid (`inGrid`),
 * and whether the letter shortcuts are on (`letters`). Keys act only on the board, so a letter typed on a
 * button beside it ("Copy link") does nothing.
 * The answer is `{ action, ... }` with `prevent` true when the browser's own handling must be stopped:
 * "undo"; "input" with `digit` and `pencil`; "erase"; "move" with `dr`, `dc`; "pencil"; "hint".
 */
export function keyAction(event, { selected, inField, inBoard, inGrid, letters = true }) {
  if (inField || event.altKey || !(inBoard || inGrid)) return null;
  if (event.ctrlKey || event.metaKey) {
    return event.key.toLowerCase() === "z" ? { action: "undo", prevent: true } : null;
  }
  const digit = digitOf(event);
  if (digit !== null && selected >= 0) {
    return digit === 0
      ? { action: "erase", prevent: true }
      : { action: "input", digit, pencil: event.shiftKey, prevent: true };
  }
  if (MOVES[event.key] && inGrid) {
    const [dr, dc] = MOVES[event.key];
    return { action: "move", dr, dc, prevent: true };
  }
  if ((event.key === "Backspace" || event.key === "Delete") && selected >= 0) return { action: "erase", prevent: true };
  if (!letters) return null;
  if (event.key === "p" || event.key === "P") return { action: "pencil", prevent: false };
  if (event.key === "h" || event.key === "H") return { action: "hint", prevent: false };
  return null;
}
