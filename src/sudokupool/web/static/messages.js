// What the page tells the player outside the board's cells: the status line, the screen readers' news of
// each move, the error banner with its one action, the success banner, and the second click a destructive
// button asks for.

const $ = (id) => document.getElementById(id);

/** The status line under the game's buttons (read out by screen readers); "" clears it. */
export function say(text) {
  $("message").textContent = text;
}

/**
 * Tells screen readers what a move changed, through a live region that is never hidden (a region shown in
 * the same step as its text is rarely read). The same news twice in a row differs by a trailing no-break
 * space, so it is read again.
 */
export function announce(text) {
  const region = $("announce");
  region.textContent = text && region.textContent === text ? `${text}\u00a0` : text;
}

let errorAction = null;

/** The error banner with `text` and one button, `action.label`, that calls `action.run()`. */
export function showError(text, action) {
  $("error-text").textContent = text;
  errorAction = action;
  $("error-retry").textContent = action.label;
  $("error").hidden = false;
}

export function hideError() {
  $("error").hidden = true;
}

/** What the error banner's button does (wired once). */
export function runErrorAction() {
  errorAction?.run();
}

/** The banner over a finished grid; its text is also announced (the banner itself appears with it). */
export function showSuccess(text) {
  const banner = $("success");
  banner.textContent = text;
  banner.hidden = false;
  announce(text);
}

export function hideSuccess() {
  $("success").hidden = true;
}

let confirmTimer = null;

/** Destructive buttons ask for a second click within a few seconds instead of a blocking dialog. */
export function confirmFirst(button, question, action) {
  if (button.dataset.confirming === "yes") {
    clearTimeout(confirmTimer);
    button.dataset.confirming = "";
    button.textContent = button.dataset.label;
    return action();
  }
  button.dataset.label ??= button.textContent;
  button.dataset.confirming = "yes";
  button.textContent = question;
  announce(`${question}: press it again within 4 seconds to confirm.`);
  confirmTimer = setTimeout(() => {
    button.dataset.confirming = "";
    button.textContent = button.dataset.label;
  }, 4000);
}
