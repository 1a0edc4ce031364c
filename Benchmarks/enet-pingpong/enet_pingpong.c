/*
 * ENet ping-pong, the baseline of `scripts/bench net`: the reliable/unreliable UDP library games use.
 *
 *   enet_pingpong server PORT
 *   enet_pingpong client HOST PORT COUNT SIZE reliable|unsequenced
 *
 * The server echoes every packet on the channel and with the flags it came with. The client sends COUNT packets of
 * SIZE bytes one at a time, each after the previous echo, serviced with enet_host_service and a timeout (a blocking
 * wait, not a busy loop), and prints one JSON object: round-trip percentiles in microseconds. 1,000 untimed round
 * trips come first.
 */
#include <enet/enet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int compare(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int serve(int port) {
    ENetAddress address = {.host = ENET_HOST_ANY, .port = (enet_uint16)port};
    ENetHost *host = enet_host_create(&address, 4, 1, 0, 0);
    if (!host) { fprintf(stderr, "enet_pingpong: cannot listen on %d\n", port); return 1; }
    printf("{\"listening\": %d}\n", port);
    fflush(stdout);
    ENetEvent event;
    for (;;) {
        int result = enet_host_service(host, &event, 1000);
        if (result < 0) return 1;
        if (result == 0) continue;
        if (event.type == ENET_EVENT_TYPE_RECEIVE) {
            ENetPacket *echo = enet_packet_create(event.packet->data, event.packet->dataLength, event.packet->flags);
            enet_peer_send(event.peer, event.channelID, echo);
            enet_host_flush(host);
            enet_packet_destroy(event.packet);
        }
    }
}

static int ping(const char *name, int port, int count, int size, int reliable) {
    ENetHost *host = enet_host_create(NULL, 1, 1, 0, 0);
    ENetAddress address;
    enet_address_set_host(&address, name);
    address.port = (enet_uint16)port;
    ENetPeer *peer = enet_host_connect(host, &address, 1, 0);
    ENetEvent event;
    if (!peer || enet_host_service(host, &event, 5000) <= 0 || event.type != ENET_EVENT_TYPE_CONNECT) {
        fprintf(stderr, "enet_pingpong: cannot connect to %s:%d\n", name, port);
        return 1;
    }
    unsigned char *payload = calloc(1, (size_t)size);
    uint64_t *samples = calloc((size_t)count, sizeof(uint64_t));
    enet_uint32 flags = reliable ? ENET_PACKET_FLAG_RELIABLE : ENET_PACKET_FLAG_UNSEQUENCED;
    int warmup = 1000;
    for (int i = 0; i < warmup + count; i++) {
        uint64_t start = now_ns();
        enet_peer_send(peer, 0, enet_packet_create(payload, (size_t)size, flags));
        enet_host_flush(host);
        for (;;) {
            int result = enet_host_service(host, &event, 1000);
            if (result < 0) { fprintf(stderr, "enet_pingpong: service failed\n"); return 1; }
            if (result == 0) {
                if (!reliable) break; /* an unsequenced packet may be lost: count it as a 1 s round trip */
                continue;
            }
            if (event.type == ENET_EVENT_TYPE_RECEIVE) {
                enet_packet_destroy(event.packet);
                break;
            }
        }
        if (i >= warmup) samples[i - warmup] = now_ns() - start;
    }
    qsort(samples, (size_t)count, sizeof(uint64_t), compare);
    printf("{\"p50_us\": %.1f, \"p90_us\": %.1f, \"p99_us\": %.1f, \"max_us\": %.1f}\n",
           samples[count / 2] / 1000.0, samples[count * 9 / 10] / 1000.0, samples[count * 99 / 100] / 1000.0,
           samples[count - 1] / 1000.0);
    enet_peer_disconnect_now(peer, 0);
    enet_host_destroy(host);
    return 0;
}

int main(int argc, char **argv) {
    if (enet_initialize() != 0) { fprintf(stderr, "enet_pingpong: enet_initialize failed\n"); return 1; }
    if (argc == 3 && strcmp(argv[1], "server") == 0) return serve(atoi(argv[2]));
    if (argc == 7 && strcmp(argv[1], "client") == 0) {
        int count = atoi(argv[4]), size = atoi(argv[5]);
        if (count < 1 || size < 1) { fprintf(stderr, "enet_pingpong: COUNT and SIZE must be positive\n"); return 2; }
        return ping(argv[2], atoi(argv[3]), count, size, strcmp(argv[6], "reliable") == 0);
    }
    fprintf(stderr, "usage: enet_pingpong server PORT | client HOST PORT COUNT SIZE reliable|unsequenced\n");
    return 2;
}
