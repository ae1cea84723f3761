// Publication operations: give a customer one of a campaign's codes, and read what was given.
import { z } from 'zod';
import { listEnvelope, Uuid } from '../../contract/common.schemas.js';
import { defineOperation } from '../../contract/operation.js';
import { CreatePublicationBody, ListPublicationsQuery, Publication, PublicationResult } from './publication.schemas.js';

const tags = ['Publications'];

export const publicationContract = {
  createPublication: defineOperation({
    name: 'publications.create',
    method: 'post',
    path: '/publications',
    scope: 'vouchers:write',
    summary: "Assign one of a campaign's codes to a customer",
    description:
      'Takes a free code of the campaign (active, unassigned, never published), else makes one from the campaign’s voucher ' +
      'template, and assigns it: only this customer may redeem it. Emits `voucher.published`. A customer named by an unknown ' +
      'sourceId is created. On a once-per-customer campaign a customer who has a code gets that one again, with ' +
      '`existing: true`. 404 for an unknown campaign; 409 `conflict` for a PROMOTION, inactive or expired campaign, or when no ' +
      'code is left.',
    tags,
    body: CreatePublicationBody,
    output: PublicationResult,
    successStatus: 201,
  }),
  getPublication: defineOperation({
    name: 'publications.get',
    method: 'get',
    path: '/publications/{id}',
    scope: 'vouchers:read',
    summary: 'Get a publication',
    tags,
    params: z.object({ id: Uuid }),
    output: Publication,
  }),
  listPublications: defineOperation({
    name: 'publications.list',
    method: 'get',
    path: '/publications',
    scope: 'vouchers:read',
    summary: 'List publications, newest first; filter by campaignId or customerId',
    tags,
    query: ListPublicationsQuery,
    output: listEnvelope(Publication, 'PublicationList'),
  }),
};
