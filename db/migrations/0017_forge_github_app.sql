-- 0017: a GitHub connection may authenticate as a GitHub App instead of with a token:
-- the app's id, the installation's id and the file holding the app's private key (PEM,
-- RSA). Like the token, the key is never stored, only the file it is read from when a
-- call is sent; the installation tokens it is exchanged for live in memory only. An app
-- connection's token_file is ''.
ALTER TABLE forge_connections ADD COLUMN app_id INTEGER;
ALTER TABLE forge_connections ADD COLUMN installation_id INTEGER;
ALTER TABLE forge_connections ADD COLUMN private_key_file TEXT;
