import { ApolloProvider } from '@apollo/client/react';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.tsx';
import { client } from './api.ts';
import { loadSignInConfig, oidcCallback } from './auth.ts';
import './style.css';

const root = createRoot(document.getElementById('root') as HTMLElement);
const config = await loadSignInConfig();
const token = config.kind === 'oidc' ? await oidcCallback(config).catch(() => undefined) : undefined;
root.render(
  <StrictMode>
    <ApolloProvider client={client}>
      <App config={config} initialToken={token} />
    </ApolloProvider>
  </StrictMode>,
);
