/** Sign-in: the email form locally, Cognito's hosted UI on AWS; and the page Cognito returns to. */
import { useEffect, useState } from 'preact/hooks';
import { consoleConfig, errorMessage } from '../api';
import { beginHostedSignIn, completeHostedSignIn, localSignIn } from '../auth';
import { ErrorMessage, Loading, PageHeader } from '../components';
import { navigate, to } from '../router';

/** Where to go after signing in: the page that asked (`?next=`), if it is one of the console's. */
function nextPage(search: string): string {
  const next = new URLSearchParams(search).get('next');
  return next && next.startsWith('/console/') && !next.startsWith('//') ? next : to('sessions');
}

export function SignInPage({ search }: { search: string }) {
  const signIn = consoleConfig().signIn;
  const [email, setEmail] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const reason = new URLSearchParams(search).get('reason');

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      if (signIn.kind === 'local') {
        await localSignIn(email.trim());
        navigate(nextPage(search), { replace: true });
      } else {
        await beginHostedSignIn(signIn, nextPage(search));
      }
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };

  return (
    <div class="sign-in">
      <PageHeader title="Sign in" />
      {reason === 'expired' ? <p class="notice">Your session ended; sign in again.</p> : null}
      <form onSubmit={submit} aria-label="Sign in" data-testid="sign-in-form">
        {signIn.kind === 'local' ? (
          <>
            <p class="muted">Local sign-in: any email with an invitation (by default dev@localhost).</p>
            <label for="email">Email</label>
            <input id="email" data-testid="email" type="email" autoComplete="email" required value={email} onInput={(event) => setEmail(event.currentTarget.value)} autoFocus />
          </>
        ) : (
          <p class="muted">You sign in on the service's sign-in page and come back here.</p>
        )}
        <button type="submit" data-testid="sign-in" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <ErrorMessage error={error} />
      </form>
    </div>
  );
}

/** Where Cognito sends the browser back with a code. */
export function CallbackPage({ search }: { search: string }) {
  const [error, setError] = useState<string>();
  useEffect(() => {
    const signIn = consoleConfig().signIn;
    if (signIn.kind !== 'cognito') {
      navigate(to('sign-in'), { replace: true });
      return;
    }
    completeHostedSignIn(signIn, search).then(
      (returnTo) => navigate(nextPage(`?next=${encodeURIComponent(returnTo)}`), { replace: true }),
      (failure: unknown) => setError(errorMessage(failure)),
    );
  }, []);
  return (
    <div class="sign-in">
      <PageHeader title="Signing in" />
      {error ? (
        <>
          <p class="error" role="alert">
            {error}
          </p>
          <a href={to('sign-in')}>Sign in again</a>
        </>
      ) : (
        <Loading label="Completing the sign-in…" />
      )}
    </div>
  );
}
