// What the page tells the player outside the board's cells: the status line, the error banner with its
// one action, the success banner, and the second click a destructive button asks for.

const $ = (id) => document.getElementById(id);

/** The status line under the game's buttons (read out by screen readers). */
export function say(text) {
  $("message").textContent = text;
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

export function showSuccess(text) {
  const banner = $("success");
  banner.textContent = text;
  banner.hidden = false;
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
  confirmTimer = setTimeout(() => {
    button.dataset.confirming = "";
    button.textContent = button.dataset.label;
  }, 4000);
}
