"""A corpus for measuring secret redaction (tests/test_redact.py, docs/secrets.md).

SECRETS: credential shapes from each provider's documented token format (values are made up
here, with the documented prefix, alphabet and length), each as the fragment in which it
appears and the substrings that must not survive. Each is embedded in three contexts: a
Python traceback, a CI environment dump and a JSON log line (where quotes become \\").

NEUTRAL: messages without secrets that look random (paths, hex addresses, UUIDs, git SHAs,
digests): none may change. INNOCENT: ordinary messages that use the keywords (token,
password, auth, secret, key, ...): at most 10% may change.
"""

from __future__ import annotations

import json
import random
import string

_rng = random.Random(20261123)
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


def r(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def _mixed(alphabet: str, n: int) -> str:
    """A random string that has an upper-case letter, a lower-case letter and a digit."""
    while True:
        s = r(alphabet, n)
        if any(c.isupper() for c in s) and any(c.islower() for c in s) and any(c.isdigit() for c in s):
            return s


_aws_secret = _mixed(B64, 40)
_aws_id = "AKIA" + r(string.ascii_uppercase + "234567", 16)
_azure_key = _mixed(B64, 86) + "=="
_sas_sig = _mixed(ALNUM, 30) + "%2B" + _mixed(ALNUM, 10) + "%3D"
_jwt_h = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
_jwt_p = "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
_jwt_s = _mixed(URLSAFE, 43)
_jwt_none_h = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0"
_pem_body = "\n".join(_mixed(B64, 64) for _ in range(6))
_slack_hook = f"T{r(string.ascii_uppercase + string.digits, 8)}/B{r(string.ascii_uppercase + string.digits, 10)}/{_mixed(ALNUM, 24)}"
_discord_hook = f"{r(string.digits, 18)}/{_mixed(URLSAFE, 68)}"
_pypi = "pypi-AgEIcHlwaS5vcmcCJ" + _mixed(URLSAFE, 150)
_telegram = f"{r(string.digits, 10)}:AA{_mixed(URLSAFE, 33)}"
_discord_tok = "MT" + _mixed(URLSAFE, 24) + "." + _mixed(URLSAFE, 6) + "." + _mixed(URLSAFE, 38)
_sendgrid = "SG." + _mixed(URLSAFE, 22) + "." + _mixed(URLSAFE, 43)
_twilio = "SK" + r(HEX, 32)
_shopify = "shpat_" + r(HEX, 32)
_gh = "ghp_" + _mixed(ALNUM, 36)
_ghpat = "github_pat_" + _mixed(ALNUM, 22) + "_" + _mixed(ALNUM, 59)
_glpat = "glpat-" + _mixed(URLSAFE, 20)
_slack_bot = "xoxb-" + r(string.digits, 12) + "-" + r(string.digits, 13) + "-" + _mixed(ALNUM, 24)
_stripe = "sk_live_" + _mixed(ALNUM, 24)
_openai = "sk-proj-" + _mixed(URLSAFE, 48)
_anthropic = "sk-ant-api03-" + _mixed(URLSAFE, 93) + "AA"
_google = "AIza" + _mixed(URLSAFE, 35)
_hf = "hf_" + _mixed(ALNUM, 34)
_npm = "npm_" + _mixed(ALNUM, 36)
_mailgun = "key-" + r(HEX, 32)
_databricks = "dapi" + r(HEX, 32)
_vault = "hvs." + _mixed(URLSAFE, 24)
_doppler = "dp.pt." + _mixed(ALNUM, 43)
_newrelic = "NRAK-" + r(string.ascii_uppercase + string.digits, 27)
_do = "dop_v1_" + r(HEX, 64)
_age = "AGE-SECRET-KEY-1" + r(string.ascii_uppercase + string.digits, 58)
_ya29 = "ya29." + _mixed(URLSAFE, 120)
_gocspx = "GOCSPX-" + _mixed(URLSAFE, 28)
_datadog = r(HEX, 32)
_twilio_auth = r(HEX, 32)
_heroku = "4b7e2c1a-9d3f-4e8a-b6c5-1f0e9d8c7b6a"
_basic = "YWRtaW46" + _mixed(B64, 14) + "=="
_bearer = _mixed(URLSAFE, 40)
_cookie_sid = _mixed(ALNUM, 32)
_csrf = _mixed(ALNUM, 32)
_pw1 = "Tr0ub4dor&3"
_pw2 = "hunter2hunter2"
_pw3 = "p@ss:w0rd@42"
_pw4 = "S3cr3t!Pass"
_pw5 = "Zx9#kL2$mQ"
_api1 = _mixed(ALNUM, 32)
_docker_auth = "dXNlcjpwYXNzd29yZDEyMw=="
_k8s_pw = "cGFzc3dvcmQxMjM0NTY="

# (name, fragment, secrets that must not survive)
SECRETS: list[tuple[str, str, list[str]]] = [
    ("aws_key_pair", f"AWS_ACCESS_KEY_ID={_aws_id} AWS_SECRET_ACCESS_KEY={_aws_secret}", [_aws_id, _aws_secret]),
    ("aws_secret_ini", f"aws_secret_access_key = {_aws_secret}", [_aws_secret]),
    (
        "azure_conn_string",
        f"DefaultEndpointsProtocol=https;AccountName=prodstore01;AccountKey={_azure_key};"
        "EndpointSuffix=core.windows.net",
        [_azure_key[:40]],
    ),
    (
        "azure_sas_url",
        f"https://prodstore01.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=sco&sp=rl"
        f"&se=2026-12-01T00:00:00Z&spr=https&sig={_sas_sig}",
        [_sas_sig[:20]],
    ),
    (
        "azure_servicebus",
        f"Endpoint=sb://ns1.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
        f"SharedAccessKey={_azure_key[:44]}",
        [_azure_key[:40]],
    ),
    ("redis_empty_user", f"redis://:{_pw4}@cache.internal:6379/0", [_pw4]),
    ("url_password_at", f"postgres://deploy:{_pw3}@db.internal:5432/app", [_pw3, "w0rd"]),
    ("url_password_plain", f"DATABASE_URL=mysql://root:{_pw2}@127.0.0.1:3306/shop", [_pw2]),
    ("amqp_url", f"amqp://guest:{_pw5}@rabbit:5672/", [_pw5]),
    ("slack_webhook", f"https://hooks.slack.com/services/{_slack_hook}", [_slack_hook.split("/")[-1]]),
    ("discord_webhook", f"https://discord.com/api/webhooks/{_discord_hook}", [_discord_hook.split("/")[-1]]),
    ("jwt_signed", f"{_jwt_h}.{_jwt_p}.{_jwt_s}", [_jwt_p, _jwt_s]),
    ("jwt_unsigned", f"token {_jwt_none_h}.{_jwt_p}.", [_jwt_p]),
    ("twilio_key", f"TWILIO_API_KEY={_twilio}", [_twilio]),
    ("twilio_bare", f"using api key {_twilio} for account", [_twilio]),
    ("twilio_auth_token", f"TWILIO_AUTH_TOKEN={_twilio_auth}", [_twilio_auth]),
    ("sendgrid_key", f"sendgrid.SendGridAPIClient('{_sendgrid}')", [_sendgrid]),
    ("private_key_quoted", f"private_key '{_api1}'", [_api1]),
    ("json_escaped_secret", f'{{"secret": "{_pw4}"}}', [_pw4]),
    ("json_escaped_in_string", f'payload={{\\"secret\\": \\"{_pw5}\\", \\"user\\": \\"bob\\"}}', [_pw5]),
    ("go_assign", f'apikey := "{_api1}"', [_api1]),
    ("go_assign_spaces", 'apikey := "correct horse battery staple"', ["correct horse battery staple", "staple"]),
    ("yaml_phrase", "password: correct horse battery staple", ["horse battery staple", "staple"]),
    ("pypi_token", f"TWINE_PASSWORD={_pypi}", [_pypi[:60]]),
    ("pypi_bare", f"uploading with {_pypi}", [_pypi[:60]]),
    ("telegram_token", f"https://api.telegram.org/bot{_telegram}/sendMessage", [_telegram.split(":")[1]]),
    ("telegram_env", f"TELEGRAM_BOT_TOKEN={_telegram}", [_telegram.split(":")[1]]),
    ("discord_token", f"client.run('{_discord_tok}')", [_discord_tok]),
    ("shopify_token", f"X-Shopify-Access-Token: {_shopify}", [_shopify]),
    ("shopify_bare", f"shop token {_shopify}", [_shopify]),
    ("mysql_p", f"mysql -h db.internal -u root -p{_pw1} shop < dump.sql", [_pw1]),
    ("mysqldump_p", f"mysqldump -uroot -p'{_pw4}' --all-databases", [_pw4]),
    ("cli_password_space", f"psql-wrapper --password {_pw2} --host db", [_pw2]),
    ("cli_password_eq", f"docker login --password={_pw5} registry.example.com", [_pw5]),
    ("cli_token", f"gh-release --token {_gh[4:]} upload", [_gh[4:]]),
    ("cookie_header", f"Cookie: sessionid={_cookie_sid}; csrftoken={_csrf}", [_cookie_sid, _csrf]),
    ("set_cookie", f"Set-Cookie: auth_session={_cookie_sid}; Path=/; HttpOnly", [_cookie_sid]),
    ("bearer_header", f"Authorization: Bearer {_bearer}", [_bearer]),
    ("basic_header", f"Authorization: Basic {_basic}", [_basic]),
    ("pem_key", f"-----BEGIN RSA PRIVATE KEY-----\n{_pem_body}\n-----END RSA PRIVATE KEY-----", [_pem_body[:64]]),
    (
        "pem_in_json",
        '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n'
        + _pem_body.replace("\n", "\\n")
        + '\\n-----END PRIVATE KEY-----\\n"}',
        [_pem_body[:64]],
    ),
    ("github_pat", f"GITHUB_TOKEN={_gh}", [_gh]),
    ("github_fine", f"git clone https://{_ghpat}@github.com/org/repo.git", [_ghpat]),
    ("gitlab_pat", f"PRIVATE-TOKEN: {_glpat}", [_glpat]),
    ("slack_bot", f"SLACK_BOT_TOKEN={_slack_bot}", [_slack_bot]),
    ("stripe_key", f"stripe.api_key = '{_stripe}'", [_stripe]),
    ("openai_key", f"OPENAI_API_KEY={_openai}", [_openai]),
    ("anthropic_key", f"x-api-key: {_anthropic}", [_anthropic]),
    ("google_key", f"https://maps.googleapis.com/maps/api/geocode/json?address=x&key={_google}", [_google]),
    ("hf_token", f"huggingface-cli login --token {_hf}", [_hf]),
    ("npm_token", f"//registry.npmjs.org/:_authToken={_npm}", [_npm]),
    ("mailgun_key", f"api:{_mailgun}", [_mailgun]),
    ("databricks", f"DATABRICKS_TOKEN={_databricks}", [_databricks]),
    ("vault_token", f"VAULT_TOKEN={_vault}", [_vault]),
    ("doppler", f"DOPPLER_TOKEN={_doppler}", [_doppler]),
    ("newrelic", f"NEW_RELIC_API_KEY={_newrelic}", [_newrelic]),
    ("digitalocean", f"doctl auth init -t {_do}", [_do]),
    ("age_key", f"# created: 2026-01-01\n{_age}", [_age]),
    ("google_oauth", f"access_token={_ya29}&token_type=Bearer", [_ya29[:40]]),
    ("google_client_secret", f'"client_secret": "{_gocspx}"', [_gocspx]),
    ("datadog_env", f"DD_API_KEY={_datadog}", [_datadog]),
    ("heroku_env", f"HEROKU_API_KEY={_heroku}", [_heroku]),
    ("docker_auth", f'{{"auths": {{"registry.example.com": {{"auth": "{_docker_auth}"}}}}}}', [_docker_auth]),
    ("k8s_secret", f"data:\n  password: {_k8s_pw}", [_k8s_pw]),
    ("netrc", f"machine api.example.com login deploy password {_pw2}", [_pw2]),
    ("curl_user", f"curl -u admin:{_pw4} https://jenkins.internal/api/json", [_pw4]),
    ("sql_identified", f"CREATE USER 'app'@'%' IDENTIFIED BY '{_pw1}';", [_pw1]),
    ("python_kwarg", f"psycopg2.connect(host='db', user='app', password='{_pw5}')", [_pw5]),
    ("query_api_key", f"GET /v1/data?api_key={_api1}&page=2", [_api1]),
    ("env_secret_key", f"DJANGO_SECRET_KEY='{_mixed(ALNUM + '!@#%^*(-_=+)', 50)}'", []),
    ("client_secret_env", f"AZURE_CLIENT_SECRET={_mixed(ALNUM + '~.-_', 40)}", []),
    ("sshpass", f"sshpass -p {_pw1} ssh deploy@host", [_pw1]),
]
# secrets computed inside the fragment (no separate variable): every value after the '=' or quote
for i, (name, frag, secrets) in enumerate(SECRETS):
    if not secrets:
        value = frag.split("=", 1)[1].strip("'")
        SECRETS[i] = (name, frag, [value])


def traceback_context(fragment: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/jobs/sync.py", line 88, in run\n'
        "    resp = session.post(url, data=payload, timeout=30)\n"
        '  File "/usr/lib/python3.11/site-packages/requests/sessions.py", line 637, in post\n'
        '    return self.request("POST", url, data=data, json=json, **kwargs)\n'
        f"requests.exceptions.ConnectionError: request failed with config {fragment}\n"
    )


def ci_env_context(fragment: str) -> str:
    return (
        "##[group]Run env | sort\n+ env | sort\nCI=true\nGITHUB_ACTIONS=true\nHOME=/home/runner\n"
        f"{fragment}\n"
        "PATH=/opt/hostedtoolcache/Python/3.11.9/x64/bin:/usr/local/bin:/usr/bin:/bin\n"
        "RUNNER_OS=Linux\nRUNNER_TEMP=/home/runner/work/_temp\n##[endgroup]\n"
    )


def json_log_context(fragment: str) -> str:
    return json.dumps(
        {
            "ts": "2026-11-22T10:14:03.512Z",
            "level": "error",
            "logger": "deploy.worker",
            "msg": f"upstream call failed: {fragment}",
            "attempt": 3,
            "trace_id": "4bf92f3577b34da6",
        }
    )


CONTEXTS = {"traceback": traceback_context, "ci_env": ci_env_context, "json_log": json_log_context}


def broad_corpus() -> list[tuple[str, str, list[str]]]:
    """``(label, text, secrets)``: every secret shape in every context. A JSON log line holds
    each secret JSON-escaped, so the escaped form is what must not survive there."""
    out = []
    for name, frag, secrets in SECRETS:
        for ctx, wrap in CONTEXTS.items():
            text = wrap(frag)
            must_go = [json.dumps(s)[1:-1] for s in secrets] if ctx == "json_log" else list(secrets)
            out.append((f"{name}/{ctx}", text, must_go))
    return out


NEUTRAL: list[str] = [
    "FileNotFoundError: [Errno 2] No such file or directory: '/home/runner/work/app/app/config/settings.yaml'",
    "Segmentation fault at address 0x7f3a2b1c4d5e (pc 0x000055d4c3b2a190)",
    "request 3f2504e0-4f89-41d3-9a0c-0305e82c3301 failed after 3 retries",
    "HEAD is now at 9fceb02d0ae598e95dc970b74767f19372d61af8 Merge pull request #4521 from org/fix-ci",
    "sha256:4a5b6c7d8e9f0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9 pulled for python:3.11-slim",
    "fatal: reference is not a tree: 1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b",
    '  File "/usr/lib/python3.11/asyncio/base_events.py", line 653, in run_until_complete',
    "MemoryError: Unable to allocate 3.73 GiB for an array with shape (500000000,) and data type float64",
    "Connection to 10.0.3.17:5432 refused; retrying in 2.0s",
    "npm ERR! code ERESOLVE while resolving @types/node@20.11.5",
    "error[E0382]: borrow of moved value: `buf` at src/main.rs:42:17",
    "java.lang.NullPointerException at com.example.billing.InvoiceService.total(InvoiceService.java:118)",
    "OSError: [Errno 28] No space left on device: '/var/lib/docker/overlay2/7c3e1f0a9b8d/merged'",
    "Downloading https://files.pythonhosted.org/packages/ab/cd/numpy-2.1.0-cp311-cp311-manylinux_2_17_x86_64.whl",
    "container 8d2f6a1c9e3b exited with code 137 (OOMKilled)",
    "pod api-7d9f8b6c5d-x2k4p in namespace prod is CrashLoopBackOff",
    'ETag: "33a64df551425fcc55e4d42a148795d9f25f89d4" did not match',
    "go: downloading golang.org/x/sys v0.15.0 h1:h48lPFYpsTvQJZF4EKyI4aLHaev3CxivZmv7yZig9pc=",
    "checksum mismatch for github.com/pkg/errors@v0.9.1: 0c7f5b3e8e1a6d4c2b9f8a7e6d5c4b3a2f1e0d9c",
    "Build #1842 finished in 4m12s on agent ip-172-31-22-9.ec2.internal",
    "Traceback (most recent call last):\n  File \"/app/main.py\", line 3, in <module>\n    import numpy\nModuleNotFoundError: No module named 'numpy'",
    "ValueError: invalid literal for int() with base 10: '0x1F'",
    "TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'",
    "assert 0.30000000000000004 == 0.3",
    "git@github.com:org/harness-memory.git: Permission denied (publickey).",
    "https://github.com/org/repo/actions/runs/7312345678/job/19923456789 failed",
    "uuid=6ba7b810-9dad-11d1-80b4-00c04fd430c8 trace=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    "ssh-keygen -lf ~/.ssh/id_ed25519.pub => SHA256:Xb4kDWpJqkL1nN3yAOVv2CLnI1E7sQm4bW9w0lFvJgc",
    "ImportError: cannot import name 'soft_unicode' from 'markupsafe' (/venv/lib/python3.11/site-packages/markupsafe/__init__.py)",
    "KeyError: 'user_id' in handler /api/v2/orders/{order_id}/items",
    "Deprecation: datetime.utcnow() is deprecated; use datetime.now(timezone.utc)",
    "core dumped: /tmp/core.python3.12345 (size 184320000)",
    'rsync: [sender] link_stat "/data/backups/2026-11-22" failed: No such file or directory (2)',
    "kernel: Out of memory: Killed process 4242 (python3) total-vm:8123456kB",
    "MD5 (release.tar.gz) = 9e107d9d372bb6826bd81d3542a419d6",
    "base64 -d <<< SGVsbG8gV29ybGQ= | wc -c",
    "E   AssertionError: expected [1, 2, 3] but got [1, 2]",
    "warning: LF will be replaced by CRLF in src/app/__init__.py",
    "HTTP 503 Service Unavailable from https://api.example.com/v1/items?page=3&per_page=100",
    "Compiling serde v1.0.193 (/home/dev/.cargo/registry/src/index.crates.io-6f17d22bba15001f/serde-1.0.193)",
]

INNOCENT: list[str] = [
    "max_tokens=4096 exceeded the model's context window",
    "Basic authentication failed for user deploy",
    "Invalid token authentication header",
    "author=Jane Doe committed 3 files",
    "token limit exceeded: 8192 tokens requested",
    "password reset email sent to user 42",
    "secret_key_base is not set in production",
    "KeyError: 'api_key'",
    "Missing required parameter: token",
    "--password-file /run/secrets/db_password not found",
    "password: ********",
    "Token expired at 2026-11-22T10:00:00Z",
    "Bearer token missing from request",
    "authentication_backend=ldap",
    "credentials_file=~/.aws/credentials",
    "tokenizer=cl100k_base",
    "token_count=512",
    "secret_name=prod/db/password",
    "access_key_id is required",
    "TokenError: token must be a string",
    "auth_mode: oauth",
    "pwd=/home/runner/work/app",
    "authorization header malformed",
    "password must be at least 12 characters",
    "private_key_path=/etc/ssl/private/server.key",
    "tokens_per_second=35.2",
    "secretary=John Smith",
    "auth_required: true",
    'api_key_header = "X-API-Key"',
    "csrf_token_name=csrftoken",
    "OAuth token refresh failed: 401 Unauthorized",
    "The token '}' was unexpected at this point.",
    "SyntaxError: unexpected token ')'",
    "Unexpected token < in JSON at position 0",
    "max_new_tokens: 256",
    "tokenize: error on line 3",
    "Passwords do not match",
    "Use Basic auth or a token",
    "token = lexer.next_token()",
    'secret = os.environ["DB_PASSWORD"]',
    "password = getpass.getpass()",
    "api_key = settings.OPENAI_API_KEY",
    'auth: {type: "oauth2"}',
    "TOKEN_TYPE=bearer",
    "credential_process = /usr/local/bin/aws-vault",
    "authenticity_token missing from form",
    "GITHUB_TOKEN=*** (masked)",
    "password=None",
    "set the password with $DB_PASSWORD",
    "api_key: ${API_KEY}",
    "keyring backend: SecretService",
    "primary key violation on table users",
    "ssh key fingerprint mismatch",
    "bypass=false; compass=north",
    "the secret sauce is caching",
    "token: expired",
]
