// Progressive enhancement only: every page works without this file.
// Copy buttons start hidden and appear only when the Clipboard API is usable.
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("button[data-copy]").forEach(function (btn) {
    var field = document.querySelector(btn.getAttribute("data-copy"));
    if (!field || !navigator.clipboard) return;
    btn.hidden = false;
    btn.addEventListener("click", function () {
      navigator.clipboard.writeText(field.value || field.textContent).then(function () {
        btn.textContent = "Copied";
      }, function () {
        field.select();
        btn.textContent = "Press Ctrl+C";
      });
    });
  });
});
