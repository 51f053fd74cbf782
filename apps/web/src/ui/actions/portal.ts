// Popovers, dialogs and notices render outside the app's tree, in roots of their own at the end
// of <body>, so no ancestor's overflow or stacking context clips them.
export function portalRoot(id: string): HTMLElement {
  let root = document.getElementById(id);
  if (!root) {
    root = document.createElement("div");
    root.id = id;
    document.body.appendChild(root);
  }
  return root;
}
