/** Paths under /console/ and the History API: deep links open the page they name. */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { CONSOLE_BASE_PATH } from '../config';

const BASE = CONSOLE_BASE_PATH.slice(0, -1);

export type Route =
  | { page: 'home' }
  | { page: 'sign-in' }
  | { page: 'callback' }
  | { page: 'sessions' }
  | { page: 'session'; id: string }
  | { page: 'traces' }
  | { page: 'trace'; key: string }
  | { page: 'agents' }
  | { page: 'agent'; name: string }
  | { page: 'memories' }
  | { page: 'secrets' }
  | { page: 'api-keys' }
  | { page: 'webhooks' }
  | { page: 'models' }
  | { page: 'not-found' };

function decode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** The page a path under /console/ names. */
export function routeOf(pathname: string): Route {
  const rest = pathname.startsWith(`${BASE}/`) ? pathname.slice(BASE.length + 1) : '';
  const [first = '', second, ...more] = rest.split('/');
  if (more.length || (second !== undefined && second === '')) return { page: 'not-found' };
  const id = second === undefined ? undefined : decode(second);
  if (second !== undefined && id === undefined) return { page: 'not-found' };
  switch (first) {
    case '':
      return { page: 'home' };
    case 'sessions':
      return id === undefined ? { page: 'sessions' } : { page: 'session', id };
    case 'traces':
      return id === undefined ? { page: 'traces' } : { page: 'trace', key: id };
    case 'agents':
      return id === undefined ? { page: 'agents' } : { page: 'agent', name: id };
    case 'sign-in':
    case 'callback':
    case 'memories':
    case 'secrets':
    case 'api-keys':
    case 'webhooks':
    case 'models':
      return id === undefined ? { page: first } : { page: 'not-found' };
    default:
      return { page: 'not-found' };
  }
}

/** A console URL: `to('sessions', id)` → `/console/sessions/<id, encoded>`. */
export function to(...segments: string[]): string {
  return `${BASE}/${segments.map(encodeURIComponent).join('/')}`;
}

const listeners = new Set<() => void>();
addEventListener('popstate', () => listeners.forEach((listener) => listener()));

/** Goes to `url` (a path under /console/, with its query) without reloading. */
export function navigate(url: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  listeners.forEach((listener) => listener());
  if (!options.replace) scrollTo(0, 0);
}

/** The current location; re-renders on every navigation. */
export function useLocation(): { pathname: string; search: string } {
  const [, setVersion] = useState(0);
  useEffect(() => {
    const listener = () => setVersion((version) => version + 1);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return { pathname: location.pathname, search: location.search };
}

interface LinkProps {
  href: string;
  children: ComponentChildren;
  class?: string;
  'aria-current'?: 'page' | undefined;
}

/** An anchor that navigates in the app (a modified click still opens a new tab). */
export function Link({ href, children, ...rest }: LinkProps) {
  const onClick = (event: MouseEvent) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return (
    <a href={href} onClick={onClick} {...rest}>
      {children}
    </a>
  );
}
