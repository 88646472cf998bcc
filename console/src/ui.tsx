// Small shared pieces: a modal dialog on the native <dialog> (focus trap and
// Escape for free), the status line read by screen readers, copying text.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

export function Dialog(props: { title: string; open: boolean; onClose: () => void; children: ComponentChildren; label?: string }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog ref={ref} aria-label={props.label ?? props.title} onClose={props.onClose} onCancel={props.onClose}>
      <h2>{props.title}</h2>
      {props.open ? props.children : null}
    </dialog>
  );
}

type Announce = (msg: string) => void;
let announcer: Announce = () => undefined;

/** The polite live region in the status bar (what was copied, created, deleted). */
export function StatusLine() {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    announcer = (msg) => {
      if (ref.current) ref.current.textContent = msg;
    };
  }, []);
  return <div class="status-line" role="status" aria-live="polite" ref={ref} />;
}

export function announce(msg: string): void {
  announcer(msg);
}

export async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // No clipboard permission (plain http on another host): the old way.
    const ta = document.createElement('textarea');
    ta.value = text;
    document.body.appendChild(ta);
    ta.select();
    document.execCommand('copy');
    ta.remove();
  }
  announce(`Copied ${text}`);
}

export function download(name: string, type: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function ErrorBox(props: { error: string | undefined }) {
  return props.error ? <div class="error-box" role="alert">{props.error}</div> : null;
}

/** A definition list from [label, value] pairs; empty values are left out. */
export function Facts(props: { items: [string, ComponentChildren][] }) {
  return (
    <dl class="facts">
      {props.items
        .filter(([, v]) => v !== undefined && v !== null && v !== '')
        .map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
    </dl>
  );
}
