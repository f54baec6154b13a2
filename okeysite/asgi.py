"""ASGI entry point: HTTP goes to Django, WebSockets to the Channels consumers.

WebSockets carry the session cookie but are not covered by CSRF protection, so every
socket must come from an allowed host, and from the site's own origin (scheme, host and port:
``okeysite.origins``), before it reaches the authentication stack.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "okeysite.settings")

# Set up Django (apps, settings) before importing anything that touches models.
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from games.live.routing import websocket_urlpatterns  # noqa: E402
from games.live.server_tasks import ServerTasks  # noqa: E402
from okeysite import frame_guard  # noqa: E402
from okeysite.origins import SameOriginValidator  # noqa: E402

# A budget on every frame a client sends, where daphne reads it (okeysite.frame_guard).
frame_guard.install()

# ServerTasks: the presence heartbeat of this process's sockets and, without Redis, the clock
# (games.live.server_tasks).
application = ServerTasks(
    ProtocolTypeRouter(
        {
            "http": django_asgi_app,
            "websocket": AllowedHostsOriginValidator(
                SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))
            ),
        }
    )
)
