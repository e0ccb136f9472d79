"""Built-in serializers. Priorities reproduce LitData's probe order on write."""
