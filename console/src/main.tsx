/** The console: reads config.json, then routes to a page; every page but sign-in needs a token. */
import { render, type ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { PermissionDeniedError } from '../../client/index';
import { api, clearToken, errorMessage, loadConfig, storedToken, whenUnauthorized } from './api';
import { ErrorMessage, Loading, PageHeader, useAsync } from './components';
import { AgentPage, AgentsPage } from './pages/agents';
import { ApiKeysPage } from './pages/api-keys';
import { MemoriesPage } from './pages/memories';
import { ModelsPage } from './pages/models';
import { SecretsPage } from './pages/secrets';
import { SessionPage, SessionsPage } from './pages/sessions';
import { CallbackPage, SignInPage } from './pages/sign-in';
import { TracePage } from './pages/trace';
import { TracesPage } from './pages/traces';
import { WebhooksPage } from './pages/webhooks';
import { Link, navigate, routeOf, to, useLocation, type Route } from './router';
import './styles.css';

const NAV: [label: string, path: string, pages: Route['page'][]][] = [
  ['Sessions', 'sessions', ['sessions', 'session']],
  ['Traces', 'traces', ['traces', 'trace']],
  ['Agents', 'agents', ['agents', 'agent']],
  ['Memories', 'memories', ['memories']],
  ['Secrets', 'secrets', ['secrets']],
  ['API keys', 'api-keys', ['api-keys']],
  ['Webhooks', 'webhooks', ['webhooks']],
  ['Models', 'models', ['models']],
];

function signInUrl(reason?: string): string {
  const params = new URLSearchParams({ next: location.pathname + location.search });
  if (reason) params.set('reason', reason);
  return `${to('sign-in')}?${params}`;
}

function App() {
  const { pathname, search } = useLocation();
  const route = routeOf(pathname);
  const signedIn = storedToken() !== null;

  useEffect(() => whenUnauthorized(() => navigate(signInUrl('expired'), { replace: true })), []);
  useEffect(() => {
    if (route.page === 'home') navigate(to('sessions'), { replace: true });
    else if (!signedIn && route.page !== 'sign-in' && route.page !== 'callback') navigate(signInUrl(), { replace: true });
  }, [route.page, signedIn]);

  if (route.page === 'sign-in') return <SignInPage search={search} />;
  if (route.page === 'callback') return <CallbackPage search={search} />;
  if (!signedIn || route.page === 'home') return <Loading />;
  return (
    <Shell route={route}>
      <Page route={route} />
    </Shell>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'sessions':
      return <SessionsPage />;
    case 'session':
      return <SessionPage key={route.id} id={route.id} />;
    case 'traces':
      return <TracesPage />;
    case 'trace':
      return <TracePage key={route.key} invocationKey={route.key} />;
    case 'agents':
      return <AgentsPage />;
    case 'agent':
      return <AgentPage key={route.name} name={route.name} />;
    case 'memories':
      return <MemoriesPage />;
    case 'secrets':
      return <SecretsPage />;
    case 'api-keys':
      return <ApiKeysPage />;
    case 'webhooks':
      return <WebhooksPage />;
    case 'models':
      return <ModelsPage />;
    default:
      return (
        <>
          <PageHeader title="Not found" />
          <p>
            No such page. <Link href={to('sessions')}>Sessions</Link>
          </p>
        </>
      );
  }
}

function Shell({ route, children }: { route: Route; children: ComponentChildren }) {
  const whoami = useAsync(() => api().whoami(), []);
  const signOut = () => {
    clearToken();
    navigate(to('sign-in'), { replace: true });
  };
  const notProvisioned = whoami.error instanceof PermissionDeniedError;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link class="brand" href={to('sessions')}>
          Agent Sessions
        </Link>
        <nav aria-label="Console">
          <ul>
            {NAV.map(([label, path, pages]) => (
              <li key={path}>
                <Link href={to(path)} aria-current={pages.includes(route.page) ? 'page' : undefined}>
                  {label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          {whoami.data ? (
            <span data-testid="whoami">{whoami.data.kind === 'user' ? whoami.data.user.email : whoami.data.api_key.name}</span>
          ) : null}
          <button type="button" class="secondary small" data-testid="sign-out" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {notProvisioned ? (
          <p class="error" role="alert">
            {errorMessage(whoami.error)}: this account is not in the private beta.
          </p>
        ) : (
          <ErrorMessage error={whoami.error} />
        )}
        {children}
      </main>
    </>
  );
}

async function boot(root: HTMLElement): Promise<void> {
  try {
    await loadConfig();
  } catch (error) {
    root.textContent = `The console could not start: ${errorMessage(error)}`;
    return;
  }
  root.textContent = '';
  render(<App />, root);
}

void boot(document.getElementById('app')!);
