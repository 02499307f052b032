#include <string.h>
#include <time.h>

#include "oauth/client_cache.h"

#define CLIENT_CACHE_SLOTS	64

struct client_slot {
	char	 client_id[65];
	time_t	 expires;
	json_t	*row;
};

static struct client_slot	client_slots[CLIENT_CACHE_KINDS][CLIENT_CACHE_SLOTS];

static struct client_slot *
client_cache_slot(enum client_cache_kind kind, const char *s)
{
	unsigned int	h = 2166136261u;

	while (*s != '\0')
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return (&client_slots[kind][h % CLIENT_CACHE_SLOTS]);
}

json_t *
client_cache_get(enum client_cache_kind kind, const char *client_id)
{
	struct client_slot	*slot;

	slot = client_cache_slot(kind, client_id);
	if (slot->row == NULL || strcmp(slot->client_id, client_id) != 0 ||
	    slot->expires <= time(NULL))
		return (NULL);
	return (slot->row);
}

void
client_cache_put(enum client_cache_kind kind, const char *client_id,
    json_t *row)
{
	struct client_slot	*slot;

	if (strlen(client_id) >= sizeof(slot->client_id))
		return;
	slot = client_cache_slot(kind, client_id);
	json_decref(slot->row);
	slot->row = json_incref(row);
	strcpy(slot->client_id, client_id);
	slot->expires = time(NULL) + CLIENT_CACHE_TTL;
}
